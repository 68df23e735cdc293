package linkdest

import (
	"fmt"
	"syscall"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Query is what Find needs of one file to be copied (its name in the
// destination: DirRel, Name, Rel) beyond the counterpart it Wants.
type Query struct {
	DirRel, Name, Rel string
	Want              Want
	Buf               []byte
	// DestDev is the filesystem of the destination directory: a
	// counterpart on another cannot be linked to.
	DestDev uint64
	// Read is told of each counterpart's Digest (the bytes read, a
	// rotten one named).
	Read func(Read)
	// Source is the source's digest, asked once, when the first
	// counterpart's content is established; false: the source could not
	// be read, and the file is copied (which reports why).
	Source func() (verify.Sum, bool)
	// SameXattrs compares the extended attributes the copy would get
	// with those of the counterpart.
	SameXattrs func(Cand) bool
	// Use takes a counterpart found to hold the source's content and
	// metadata (open until Use returns): it links to it (or fails the
	// file, reported) and returns true; or returns false and the next
	// directory is tried, with why it could not link (out of links:
	// Linked.Fallback), nil when the counterpart is no longer what was
	// established.
	Use func(Found) (bool, error)
}

// Found is a counterpart that holds the source's digest (Sum), as its
// Digest established it: the stat St the digest holds for, read from the
// device from At.
type Found struct {
	Cand Cand
	Sum  verify.Sum
	St   fileio.Stat
	At   time.Time
}

// Find looks for the file's counterpart under each directory in order
// and hands the first with the same content and metadata to q.Use: one
// whose digest is not the source's, whose extended attributes differ, or
// that cannot be read is passed over; one on another filesystem than the
// destination directory (EXDEV), or that Use could not link to, is passed
// over too, and the last such reason is returned (why the file is copied
// although a counterpart matched). It reports whether Use took one.
func (s *Set) Find(q Query) (used bool, fallback error) {
	var srcSum verify.Sum
	srcKnown := false
	for i := 0; i < s.Len(); i++ {
		cand, ok := s.Candidate(i, q.DirRel, q.Name, q.Want)
		if !ok {
			continue
		}
		used, stop, err := func() (used, stop bool, err error) {
			defer cand.Close()
			read, ok := s.Digest(cand, q.Rel, q.Buf)
			q.Read(read)
			if !ok {
				return false, false, nil
			}
			if !srcKnown {
				if srcSum, srcKnown = q.Source(); !srcKnown {
					return false, true, nil // the source could not be read: copied, which reports why
				}
			}
			if read.Sum != srcSum || !q.SameXattrs(cand) {
				return false, false, nil
			}
			if q.DestDev != read.St.Dev {
				return false, false, fmt.Errorf("%w: --link-dest %q is on another filesystem than the destination", syscall.EXDEV, cand.Dir.Arg)
			}
			used, err = q.Use(Found{Cand: cand, Sum: srcSum, St: read.St, At: read.At})
			return used, used, err
		}()
		if err != nil {
			fallback = err
		}
		if used || stop {
			return used, fallback
		}
	}
	return false, fallback
}
