package move

import (
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Config is the whole input of a run's --move.
type Config struct {
	// NoSync leaves the removals unflushed.
	NoSync bool
	// SkipWrite is the dry run's gate (the engine's one): Finish checks
	// and reports what it would remove, and removes nothing; nil: the
	// run writes.
	SkipWrite func() bool
	// AllXattrs says the copies took every extended attribute (the run
	// is root's); otherwise only user.* and the ACLs are compared.
	AllXattrs bool
	// OpenDir opens a directory by its path (a source directory, a
	// source root, DEST's root): the run's own open.
	OpenDir func(path string) (*fileio.Dir, error)
	// Dest returns DEST's root: its path, and the directory the run
	// opened, locked and checked (nil when none is open), through which
	// the copies are looked up, so that a name swapped above DEST since
	// cannot redirect the look.
	Dest func() (path string, root *fileio.Dir)
	// Dirs returns the source directories the copy went through (a dry
	// run's are noted by NoteDryDir instead).
	Dirs func() []Dir
	// Failures returns the paths in DEST of what failed so far in the
	// run: no directory at or above one is removed.
	Failures func() []string
	// Stopped reports whether the run was stopped: nothing more is
	// removed.
	Stopped func() bool
	// Failed is told of a source kept because something failed, by its
	// copy's path in DEST.
	Failed func(rel string, err error)
	// Removed is told of each source entry removed (in a dry run: that
	// would be), by its copy's path in DEST; dir says it is a directory
	// left empty.
	Removed func(rel string, dir bool)
	// Hashed is told of the bytes read again to prove a source's content.
	Hashed func(n int64)
}

// dry reports whether this is a dry run (SkipWrite).
func (c *Config) dry() bool { return c.SkipWrite != nil && c.SkipWrite() }

// Dir is a source directory the run went through: its source root, its
// path below it, and its copy's path below DEST.
type Dir struct {
	SrcRoot, SrcRel, DstRel string
}

// devIno is an inode's identity.
type devIno struct{ dev, ino uint64 }

// Journal is the run's --move. A nil Journal (a run without --move) notes
// nothing and removes nothing.
type Journal struct {
	cfg   Config
	mu    sync.Mutex
	items []Item
	dirID map[*fileio.Dir]devIno
	// left counts the sources left in place because -u or
	// --ignore-existing kept their DEST file: not moved.
	left int64
	// dryDirs are the source directories a dry run went through.
	dryDirs []Dir
	// metaKept counts, per kind of metadata (lostXattrs, lostACLs), the
	// sources kept because the destination could not keep theirs.
	metaKept map[string]int64
	// ctimes holds the change time of each source inode one of whose
	// names Finish removed, as it was after (-1: not known).
	ctimes map[devIno]int64
	// removed are the directories removed from, flushed by Flush.
	removed removals
}

// New returns the journal of a run with --move.
func New(cfg Config) *Journal { return &Journal{cfg: cfg} }

// Item is a source entry to remove: its directory (by path, and the
// identity that directory had when it was read), its name, and the stat
// its copy was made from.
type Item struct {
	srcDir string
	dirID  devIno
	name   string
	rel    string // in the destination, for messages
	st     fileio.Stat
	sum    verify.Sum // the digest its copy was verified with; zero when unknown
}

// Source returns the Item of the entry name of the source directory dir,
// read with the stat st, whose copy is rel in DEST. It is taken while dir
// is open; the entry is noted (Note) once its copy reached its final name.
func (j *Journal) Source(dir *fileio.Dir, name string, st fileio.Stat, rel string) Item {
	if j == nil || dir == nil {
		return Item{}
	}
	j.mu.Lock()
	id, ok := j.dirID[dir]
	j.mu.Unlock()
	if !ok {
		dst, err := dir.Stat()
		if err != nil {
			return Item{}
		}
		id = devIno{dst.Dev, dst.Ino}
		j.mu.Lock()
		if j.dirID == nil {
			j.dirID = map[*fileio.Dir]devIno{}
		}
		j.dirID[dir] = id
		j.mu.Unlock()
	}
	return Item{srcDir: dir.Path(), dirID: id, name: name, rel: rel, st: st}
}

// Note notes it, whose copy reached its final name with the content sum
// (zero when unknown), to remove once the copy is durable (Finish).
func (j *Journal) Note(it Item, sum verify.Sum) {
	if j == nil || it.srcDir == "" {
		return
	}
	it.sum = sum
	j.mu.Lock()
	j.items = append(j.items, it)
	j.mu.Unlock()
}

// KeptInPlace notes a source left in place because its DEST file was kept
// (-u, --ignore-existing): it is not moved, and the run says so.
func (j *Journal) KeptInPlace() {
	if j != nil {
		j.mu.Lock()
		j.left++
		j.mu.Unlock()
	}
}

// NoteDryDir notes, in a dry run, a source directory the walk went
// through (the real run's are Config.Dirs).
func (j *Journal) NoteDryDir(d Dir) {
	if j != nil {
		j.mu.Lock()
		j.dryDirs = append(j.dryDirs, d)
		j.mu.Unlock()
	}
}
