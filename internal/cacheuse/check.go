package cacheuse

import (
	"errors"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/source"
	"github.com/fastcopy/fastcopy/verify"
)

// ErrMoved is returned by ReadDest for a file that changed while it was
// read.
var ErrMoved = errors.New("destination file changed while it was read")

// Check is the check of a file whose size matches its destination but
// whose sameness the stats and the cache could not decide: each side's
// digest is taken from the cache where its entry vouches (the Answer, as
// --scrub's ledger left it), else read. Run reads what it must.
type Check struct {
	// Answer is the cache's answer for the file, as the caller kept it
	// (nil: none); Answer.Dst is also the digest a destination entry
	// recorded under --move (MoveRec).
	Answer *Answer
	// ReadDst: the destination file is read whatever the cache says (it
	// may hold another source name's bytes).
	ReadDst bool
	// Device: the destination file is read from the device itself, its
	// cached pages dropped first (--move).
	Device bool

	SrcSize int64 // the source's size, as the walk found it
	// ReadSource reads the source for its digest, failing if it moved.
	ReadSource func() (verify.Sum, error)
	// DstStat is the destination's stat as the walk found it, Dir and
	// Name its directory and name, read through Buf into Sink.
	DstStat *fileio.Stat
	Dir     *fileio.Dir
	Name    string
	Buf     []byte
	Sink    verify.Sink
}

// Checked is what a Check found: each side's digest, taken from the
// cache (SrcOK, DstOK) or read, and what the caller counts and records.
// It is filled in as far as the check went when Run fails.
type Checked struct {
	Src, Dst     verify.Sum
	SrcOK, DstOK bool
	SrcAt        time.Time    // when the source was read for Src (zero: Src is the cache's)
	Vouched      *fileio.Stat // the destination's stat its digest holds for
	Found        *fileio.Stat // the destination as read, when it was
	FoundAt      time.Time
	FoundRead    int64 // hashcache.Entry.ReadAt of that read
	// RottenByMove: under --move, the copy does not give the digest its
	// entry recorded for it, which the source still gives: it is rotten,
	// and Src was read again (were it the cache's) to be sure of that.
	RottenByMove bool
	Hits         int64 // digests the cache answered
	Hashed       int64 // bytes of either side read and hashed
	Read         int64 // bytes of the destination read
}

// Run takes each side's digest, from the cache or read (the source
// first), then looks for --move's rot. An error is a read that failed:
// the file is copied, which reports a real error.
func (c *Check) Run() (Checked, error) {
	var k Checked
	if a := c.Answer; a != nil {
		k.Src, k.SrcOK, k.Dst, k.DstOK = a.Src, a.SrcOK, a.Dst, a.DstOK
	}
	hits := int64(0)
	if k.SrcOK {
		hits++
	} else {
		started := time.Now()
		sum, err := c.ReadSource()
		if err != nil {
			return k, err
		}
		k.Hashed += c.SrcSize
		k.Src, k.SrcAt = sum, started
	}
	k.Vouched = c.DstStat // the stat the cache entry was found valid with
	if k.DstOK && !c.ReadDst {
		hits++
	} else {
		started := time.Now()
		sum, st, n, err := ReadDest(c.Dir, c.Name, c.Buf, c.Device, c.Sink)
		k.Read += n
		if err != nil {
			return k, err
		}
		k.Hashed += st.Size
		k.Found, k.FoundAt = &st, started
		if c.Device {
			k.FoundRead = DeviceRead(started) // read from the device
		}
		k.Dst, k.Vouched = sum, &st
	}
	k.Hits = hits
	return k, c.rottenForMove(&k)
}

// rottenForMove finds, under --move, a copy that does not give the digest
// its cache entry recorded for it rotten: the source it would be removed
// for is copied again only from a source that gives the digest recorded
// for both (read now if it came from the cache), and removed once that
// copy is verified. An error is that read's.
func (c *Check) rottenForMove(k *Checked) error {
	a := c.Answer
	if a == nil || !a.MoveRec || a.Rotten || k.Dst == a.Dst || a.Dst != k.Src {
		return nil
	}
	k.RottenByMove = true
	if k.SrcOK {
		sum, err := c.ReadSource()
		if err != nil {
			return err
		}
		k.Hashed += c.SrcSize
		k.Hits--
		k.Src = sum
	}
	return nil
}

// ReadDest reads a destination file for its digest, failing if it moved
// (ErrMoved); from the device itself, its cached pages dropped first, when
// device. It returns the stat the digest holds for and the bytes read,
// counted even when it fails after reading.
func ReadDest(dd *fileio.Dir, name string, buf []byte, device bool, sink verify.Sink) (verify.Sum, fileio.Stat, int64, error) {
	f, err := dd.Open(name, false)
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, 0, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, 0, err
	}
	if device {
		_ = f.DropCache() // what is cached must not answer for the device
	}
	sum, n, err := verify.Stream(f, before.Size, false, buf, sink)
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, 0, err
	}
	after, err := f.Stat()
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, n, err
	}
	if source.Changed(&before, &after) || n != before.Size {
		return verify.Sum{}, fileio.Stat{}, n, ErrMoved
	}
	return sum, after, n, nil
}
