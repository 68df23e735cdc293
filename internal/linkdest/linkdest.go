package linkdest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
	"github.com/fastcopy/fastcopy/internal/source"
	"github.com/fastcopy/fastcopy/verify"
)

// Cache is the part of the hash cache Digest uses (*hashcache.Cache).
type Cache interface {
	Lookup(paths []string) []hashcache.LookupResult
	Put(path string, e hashcache.Entry)
}

// Config is the whole input of the snapshot stage.
type Config struct {
	Dirs    []string // the --link-dest directories, as given; a relative one is relative to DstRoot
	DstRoot string   // the destination directory, made or not yet (a dry run)
	// SkipWrite is the dry run's gate (the engine's one): decide and read
	// as the real run does, but mark no cache entry rotten; nil: the run
	// writes.
	SkipWrite func() bool

	Cache Cache // nil without a hash cache: a counterpart is read, never judged by its entry
	// ReadDevice reads name in d for its digest past its cached pages,
	// failing if it moved while read; it returns the stat the digest
	// holds for.
	ReadDevice func(d *fileio.Dir, name string, buf []byte) (verify.Sum, fileio.Stat, error)
	// Volume is the volume the cache keys files of filesystem dev by (d
	// a directory on it).
	Volume func(d *fileio.Dir, dev uint64) hashcache.Volume
	// ModesLost reports whether filesystem dev keeps no permission bits
	// (then modes are not compared).
	ModesLost func(dev uint64) bool
}

// Set is the --link-dest directories of a run, opened.
type Set struct {
	cfg    Config
	dirs   []Dir
	rootFS uint64 // the filesystem DEST is (or, in a dry run, would be) on
}

// Dir is one --link-dest directory, opened.
type Dir struct {
	Arg    string // as given
	d      *fileio.Dir
	abs    string // the hash cache's key of the directory: its real path
	policy hashcache.Policy
}

// Open resolves and opens cfg's directories: a relative one is relative
// to the destination directory, as with rsync (Path). One that cannot be
// opened is left out, with a note saying why; its files are then copied.
// The caller closes the Set.
func Open(cfg Config) (s *Set, notes []string) {
	s = &Set{cfg: cfg}
	if len(cfg.Dirs) == 0 {
		return s, nil
	}
	// The filesystem DEST is on, or its nearest existing parent's, where
	// a dry run has no DEST yet.
	for p := cfg.DstRoot; ; p = filepath.Dir(p) {
		if d, err := fileio.OpenDir(p); err == nil {
			if st, err := d.Stat(); err == nil {
				s.rootFS = st.Dev
			}
			d.Close()
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	for _, arg := range cfg.Dirs {
		p := Path(cfg.DstRoot, arg)
		if r, err := fileio.Resolve(p); err == nil && hasDotDot(p) {
			p = r
		}
		d, err := fileio.OpenDir(p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("--link-dest %q (%s) cannot be used: %s; files are copied, not linked to it", arg, p, refusal.Text(err)))
			continue
		}
		abs := fileio.RealPath(p)
		fsType, _ := fileio.FSType(abs)
		s.dirs = append(s.dirs, Dir{Arg: arg, d: d, abs: abs, policy: hashcache.PolicyFor(fsType)})
	}
	return s, notes
}

// Close closes the directories.
func (s *Set) Close() {
	for _, dir := range s.dirs {
		dir.d.Close()
	}
	s.dirs = nil
}

// Len is the number of directories opened (none for a nil Set).
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.dirs)
}

// RootFS is the filesystem the destination directory is on, or its
// nearest existing parent's (zero for a nil Set).
func (s *Set) RootFS() uint64 {
	if s == nil {
		return 0
	}
	return s.rootFS
}

// Path is where the --link-dest arg lies: a relative one is relative to
// the destination directory dstRoot, resolved by the kernel from DEST
// itself, never cut as text: where DEST is reached through a symlink,
// DEST/.. is the parent of the symlink's target, not of the symlink. Only
// a ".." from a part of DEST not made yet (a dry run, a DEST to be
// created) is taken as text: that part will be plain directories, made
// where the resolved path says.
func Path(dstRoot, arg string) string {
	if filepath.IsAbs(arg) {
		return arg
	}
	base := dstRoot
	if r, err := fileio.Resolve(dstRoot); err == nil {
		base = r
	}
	parts := strings.Split(filepath.ToSlash(arg), "/")
	for len(parts) > 0 && (parts[0] == ".." || parts[0] == "." || parts[0] == "") {
		if parts[0] == ".." {
			if _, err := os.Lstat(base); err == nil {
				break // from here the kernel resolves it
			}
			base = filepath.Dir(base)
		}
		parts = parts[1:]
	}
	return base + string(filepath.Separator) + filepath.FromSlash(strings.Join(parts, "/"))
}

func hasDotDot(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// Want is what a counterpart must be to be linked to: a regular file of
// the copy's size, with the mode, owner and mtime the copy would get (a
// hard link shares its inode's).
type Want struct {
	Size     int64
	Mode     uint32 // permission bits
	Uid, Gid uint32
	Mtime    int64
	Gran     int64 // the mtime granularity the comparison allows (1 or less: exact)
	// Self is the destination entry's stat, nil when there is none: a
	// counterpart that is that very inode is none.
	Self *fileio.Stat
}

// Cand is a counterpart under a --link-dest directory, its directory
// open; the caller closes it.
type Cand struct {
	Dir  *Dir
	D    *fileio.Dir // its directory, opened below the --link-dest root
	Name string
	Rel  string // its path below the --link-dest root
	St   fileio.Stat
}

// Close closes the counterpart's directory.
func (c *Cand) Close() { c.D.Close() }

// Where is the counterpart's path, for messages.
func (c *Cand) Where() string {
	return filepath.Join(c.Dir.d.Path(), filepath.FromSlash(c.Rel))
}

// Candidate finds the counterpart at dirRel/name under the i-th directory
// (in the order given) that is what w wants.
func (s *Set) Candidate(i int, dirRel, name string, w Want) (Cand, bool) {
	dir := &s.dirs[i]
	d, err := dir.d.OpenBeneath(dirRel)
	if err != nil {
		return Cand{}, false
	}
	st, err := d.Lstat(name)
	if err != nil || !st.IsRegular() || st.Size != w.Size ||
		(w.Self != nil && w.Self.Dev == st.Dev && w.Self.Ino == st.Ino) {
		d.Close()
		return Cand{}, false
	}
	modeOK := st.Mode&0o7777 == w.Mode || (s.cfg.ModesLost != nil && s.cfg.ModesLost(st.Dev))
	if !modeOK || st.Uid != w.Uid || st.Gid != w.Gid || !hashcache.SameTime(st.Mtime, w.Mtime, w.Gran) {
		d.Close()
		return Cand{}, false
	}
	rel := name
	if dirRel != "" {
		rel = dirRel + "/" + name
	}
	return Cand{Dir: dir, D: d, Name: name, Rel: rel, St: st}, true
}

// Read is a counterpart's content as Digest established it.
type Read struct {
	Sum    verify.Sum
	St     fileio.Stat // the stat the digest holds for
	At     time.Time   // when the read from the device began (zero for an empty file)
	Hashed int64       // the bytes read for the digest
	// Rotten, when not empty, names the counterpart as rotten on the
	// device, in a sentence for the summary.
	Rotten string
}

// Digest establishes the counterpart's content by reading it from the
// device, its cached pages dropped first: the link will share these
// bytes, and a valid hash-cache entry says only that the stat is the one
// hashed, not that the bytes on the device are still those (bit rot
// leaves the stat alone). A counterpart whose valid entry records another
// digest than the one read is rotten: named in Read.Rotten (rel is the
// file's in DEST), its entry marked rotten (hashcache.Entry.Rotten) but
// in a dry run, and false returned: not linked to. False too where it
// cannot be read or moved since Candidate saw it.
func (s *Set) Digest(c Cand, rel string, buf []byte) (Read, bool) {
	if c.St.Size == 0 {
		return Read{Sum: verify.Bytes(nil), St: c.St}, true
	}
	r := Read{At: time.Now()}
	sum, st, err := s.cfg.ReadDevice(c.D, c.Name, buf)
	r.St = st
	if err != nil || source.Changed(&c.St, &st) {
		return r, false
	}
	r.Sum, r.Hashed = sum, st.Size
	if s.cfg.Cache == nil {
		return r, true
	}
	pol := c.Dir.policy
	vol := s.cfg.Volume(c.D, c.St.Dev)
	key := c.Dir.key(c.Rel)
	res := s.cfg.Cache.Lookup([]string{key})
	state := hashcache.FileState{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Volume: vol}
	// A counterpart marked rotten (by an earlier run) is judged by its
	// stat and recorded digest as any other: named again while rotten.
	if !res[0].Found || !res[0].Entry.Unmarked().Valid(state, pol) {
		return r, true
	}
	ent := res[0].Entry
	if ent.Sum == sum {
		return r, true
	}
	r.Sum = verify.Sum{}
	r.Rotten = fmt.Sprintf("%q: rotten on the device: --link-dest read bytes that are not the digest %s its hash-cache entry recorded, its stat unchanged; %q copied from the source instead of linked to it", c.Where(), verify.Hex(ent.Sum), rel)
	if s.cfg.SkipWrite == nil || !s.cfg.SkipWrite() {
		// Marked rotten, its recorded digest kept: never valid (verify
		// with the cache reads it), read first by a --scrub of its tree,
		// and named again by the next --link-dest to it.
		ent.ReadAt, ent.Rotten = 0, true
		s.cfg.Cache.Put(key, ent)
	}
	return r, false
}

// key is the hash cache's key of rel below the directory.
func (d *Dir) key(rel string) string {
	if rel == "" {
		return d.abs
	}
	return filepath.Join(d.abs, filepath.FromSlash(rel))
}

// Place is where Link puts the link, and what the caller does around the
// making of its temporary.
type Place struct {
	Dst  *fileio.Dir // the destination directory
	Tmp  string      // the temporary name the link is made under
	Name string      // the final name
	// Before is called once the counterpart is found unchanged, just
	// before the temporary is made (to clear a leftover under Tmp and to
	// record the temporary as made); After with the error of its making.
	Before func()
	After  func(err error)
}

// Linked is what became of a Link.
type Linked struct {
	// St is the stat of the final name, now the link; nil when not linked.
	St *fileio.Stat
	// Fallback is why a counterpart that matched could not be linked (out
	// of links, another filesystem, a refusal): the file is copied. Nil
	// with St nil: the counterpart is no longer what was established, and
	// the next one is tried.
	Fallback error
	// Err is the failure of the file: linked under the temporary name but
	// not put in place (the temporary removed). The file is done.
	Err error
}

// Link makes p.Name a hard link to the counterpart whose digest was
// established with stat est: a link under the temporary name, checked to
// lead to that inode, unchanged and not written since, then renamed onto
// the name and checked again there. rel is the file's path in DEST, for
// the failure.
func (s *Set) Link(c Cand, est fileio.Stat, p Place, rel string) Linked {
	dd := p.Dst
	n, err := c.D.OpenNode(c.Name)
	if err != nil {
		return Linked{}
	}
	defer n.Close()
	written, watched := n.WatchWrites()
	wrote := func() bool { return watched && written() }
	if before, err := n.Restat(); err != nil || source.Changed(&est, &before) {
		wrote()
		return Linked{}
	}
	if p.Before != nil {
		p.Before()
	}
	err = LinkChecked(dd, p.Tmp, c.D, c.Name, est.Dev, est.Ino)
	if p.After != nil {
		p.After(err)
	}
	if err != nil {
		wrote()
		switch {
		case errors.Is(err, ErrReplaced):
			return Linked{}
		case errors.Is(err, syscall.EMLINK):
			return Linked{Fallback: fmt.Errorf("%q has as many hard links as its filesystem allows: %w", c.Where(), err)}
		}
		return Linked{Fallback: err} // across filesystems (EXDEV), refused, unsupported
	}
	after, err := dd.Lstat(p.Tmp)
	if wrote() || err != nil || after.Size != est.Size || after.Mtime != est.Mtime {
		_ = dd.Remove(p.Tmp) // written meanwhile: what was established is gone
		return Linked{}
	}
	if err := dd.Rename(p.Tmp, dd, p.Name); err != nil {
		_ = dd.Remove(p.Tmp)
		return Linked{Err: err}
	}
	cur, err := dd.Lstat(p.Name)
	if err != nil || cur.Dev != est.Dev || cur.Ino != est.Ino {
		return Linked{Err: &refusal.Mismatch{Path: rel, Cause: fmt.Sprintf("%q was replaced by another file as it took its name; rerun", p.Name)}}
	}
	return Linked{St: &cur}
}

// ErrReplaced says a name to be hard-linked no longer leads to the inode
// that was verified.
var ErrReplaced = errors.New("the name was replaced by another file since its copy was verified; rerun")

// LinkChecked makes tmp in dd a hard link to name in od and checks that it
// leads to the inode (dev, ino) the caller verified: linkat names what it
// links, and a writer of the destination can put another file under that
// name (one outside the destination, hard-linked in) at any moment. A
// link to anything else is removed, and ErrReplaced returned.
func LinkChecked(dd *fileio.Dir, tmp string, od *fileio.Dir, name string, dev, ino uint64) error {
	if err := dd.Link(od, name, tmp); err != nil {
		return err
	}
	if st, err := dd.Lstat(tmp); err != nil || st.Dev != dev || st.Ino != ino {
		_ = dd.Remove(tmp)
		return ErrReplaced
	}
	return nil
}
