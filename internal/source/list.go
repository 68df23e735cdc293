package source

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/filter"
	"github.com/fastcopy/fastcopy/internal/readorder"
)

// Lister is how a walk of the sources lists a source directory: the
// run's filters, whether symlinks inside the tree are followed (-L) and
// the hash cache's own files, which no walk copies. Its fields are its
// whole input; the zero value lists everything and follows nothing.
type Lister struct {
	Rules  *filter.Rules    // what the walk leaves out; nil: nothing
	Deref  bool             // symlinks inside the tree are followed (-L)
	Own    Own              // the hash cache's files, left out
	Faults *fileio.FaultSet // injected into what is opened (a run under test); nil: none
}

// Inode names a file: its device and inode number.
type Inode struct{ Dev, Ino uint64 }

// Own is where a run's hash cache lies, so that a walk that meets it
// (a run backing up the home directory meets its own cache, which it
// writes as it goes: copying it would fail as a changed source) leaves it
// out, with its journals and presence file (hashcache.IsOwnFile), which
// the runs that share the cache write as they go. The zero value is no
// cache.
type Own struct {
	File Inode  // the cache's file (a regular file)
	Dir  Inode  // the directory it is in
	Path string // the cache's path ("": no cache)
}

// OwnOf finds the hash cache at path; "" is no cache.
func OwnOf(path string) Own {
	var o Own
	if path == "" {
		return o
	}
	o.Path = path
	if d, err := fileio.OpenDir(filepath.Dir(path)); err == nil {
		if st, err := d.Lstat(filepath.Base(path)); err == nil && st.IsRegular() {
			o.File = Inode{st.Dev, st.Ino}
		}
		if st, err := d.Stat(); err == nil {
			o.Dir = Inode{st.Dev, st.Ino}
		}
		d.Close()
	}
	return o
}

// IsFile reports whether st is the cache's file.
func (o *Own) IsFile(st *fileio.Stat) bool {
	return st.Ino != 0 && Inode{st.Dev, st.Ino} == o.File
}

// Journal reports whether name, in the source directory d, is a journal
// or the presence file of the cache.
func (o *Own) Journal(d *fileio.Dir, name string) bool {
	if o.Path == "" || !hashcache.IsOwnFile(o.Path, name) {
		return false
	}
	st, err := d.Stat()
	return err == nil && Inode{st.Dev, st.Ino} == o.Dir
}

// Ancestor is a source directory on the way down from a walk root. With
// -L a followed symlink that leads back to one of them is a loop; one
// that leads elsewhere, even to a directory copied already, is copied
// again, as cp -L does.
type Ancestor struct {
	key Inode
	up  *Ancestor
}

// OpenDir opens the source directory rel below the root directory root,
// through descriptors (a joined path past PATH_MAX cannot be opened in
// one call), following symlinks on the way with -L and none without.
func (l *Lister) OpenDir(root, rel string) (*fileio.Dir, error) {
	r, err := fileio.OpenDirFaults(root, l.Faults)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if l.Deref {
		return r.OpenFollow(rel)
	}
	return r.OpenBeneath(rel)
}

// OpenFile opens dir, the directory of a source named as a file, and
// stats the file name in it, following a symlink: symlinks named on the
// command line are followed.
func (l *Lister) OpenFile(dir, name string) (*fileio.Dir, fileio.Stat, error) {
	d, err := fileio.OpenDirFaults(dir, l.Faults)
	if err != nil {
		return nil, fileio.Stat{}, err
	}
	st, err := d.StatFollow(name)
	if err != nil {
		d.Close()
		return nil, fileio.Stat{}, err
	}
	return d, st, nil
}

// StatRoot is the stat of the root directory dir of a source.
func (l *Lister) StatRoot(dir string) (fileio.Stat, error) {
	d, err := fileio.OpenDirFaults(dir, l.Faults)
	if err != nil {
		return fileio.Stat{}, err
	}
	defer d.Close()
	return d.Stat()
}

// Listing is a source directory as a walk lists it: its names, which of
// them the filters leave out, and each one's stat.
type Listing struct {
	Dir      *fileio.Dir       // the directory, open: the caller closes it
	Here     *Ancestor         // with -L: this directory, above those below it
	Names    []fileio.DirEntry // its entries, in the order fileio lists them
	Excluded []bool            // by index of Names, once Exclude has run

	l         *Lister
	root, rel string
	stats     []preStat // with PreStat: each name's stat, taken in inode order
}

// Open opens and lists the source directory rel below root, which lies
// below the directories above (nil at a root); with -L it first fails a
// directory that leads back to one of them.
func (l *Lister) Open(root, rel string, above *Ancestor) (*Listing, error) {
	d, err := l.OpenDir(root, rel)
	if err != nil {
		return nil, err
	}
	var here *Ancestor
	if l.Deref {
		if st, err := d.Stat(); err == nil {
			k := Inode{st.Dev, st.Ino}
			for a := above; a != nil; a = a.up {
				if a.key == k {
					d.Close()
					return nil, fmt.Errorf("directory loop through a followed symlink: %q leads back to a directory above it", filepath.Join(root, rel))
				}
			}
			here = &Ancestor{key: k, up: above}
		}
	}
	ls, err := l.Read(d, root, rel)
	if err != nil {
		d.Close()
		return nil, err
	}
	ls.Here = here
	return ls, nil
}

// Read lists d, the source directory rel below root, open already; the
// caller keeps closing d.
func (l *Lister) Read(d *fileio.Dir, root, rel string) (*Listing, error) {
	names, err := d.ReadDir()
	if err != nil {
		return nil, err
	}
	return &Listing{Dir: d, Names: names, l: l, root: root, rel: rel}, nil
}

// Excludes reports whether the filters leave out the entry i, at rel
// (relative to the root: the listing's rel joined with its name, as the
// caller has it): Excluded's rule.
func (ls *Listing) Excludes(i int, rel string) bool {
	return Excluded(ls.l.Rules, ls.l.Deref, ls.root, ls.Dir, rel, ls.Names[i])
}

// Exclude judges every entry (Excludes), or leaves it out when also
// answers true for its name, into Excluded.
func (ls *Listing) Exclude(also func(name string) bool) {
	ls.Excluded = make([]bool, len(ls.Names))
	for i, n := range ls.Names {
		ls.Excluded[i] = ls.Excludes(i, join(ls.rel, n.Name)) || also(n.Name)
	}
}

// RuleErr returns the error met reading the directory's own rule files
// (--gitignore, --filter-file), once its entries were judged: the walk
// fails the directory with it, so that --delete keeps what is in it.
func (ls *Listing) RuleErr() error {
	if !ls.l.Rules.PerDir() {
		return nil
	}
	return ls.l.Rules.Tree(ls.root).Err(ls.rel)
}

// preStat is a name's stat taken ahead (see Listing.PreStat).
type preStat struct {
	st   fileio.Stat
	err  error
	done bool
}

// PreStat stats the names, but those skip answers true for, in inode
// order (readorder.StatOrder), before the walk goes through them in
// listing order: the inode tables are read in one direction instead of
// by name. It stops when ctx is done; Stat takes what it found.
func (ls *Listing) PreStat(ctx context.Context, skip func(i int) bool) {
	order := readorder.StatOrder(ls.Names, skip)
	ls.stats = make([]preStat, len(ls.Names))
	for _, i := range order {
		if ctx.Err() != nil {
			return
		}
		ps := &ls.stats[i]
		ps.st, ps.err = ls.stat(ls.Names[i].Name)
		ps.done = true
	}
}

// stat is the stat of name: its target's with -L.
func (ls *Listing) stat(name string) (fileio.Stat, error) {
	if ls.l.Deref {
		return ls.Dir.StatFollow(name)
	}
	return ls.Dir.Lstat(name)
}

// Stat returns the stat of the entry i (taken ahead by PreStat, or now):
// its target's with -L. ok is false when there is nothing to copy: err
// says why the entry cannot be read, or is nil when it vanished since the
// listing. A symlink whose target is missing, which -L cannot follow, is
// an error (cp -L and rsync -L fail it too).
func (ls *Listing) Stat(i int) (st fileio.Stat, ok bool, err error) {
	name := ls.Names[i].Name
	if ls.stats != nil && ls.stats[i].done {
		st, err = ls.stats[i].st, ls.stats[i].err
	} else {
		st, err = ls.stat(name)
	}
	if err == nil {
		return st, true, nil
	}
	if !fileio.IsNotExist(err) {
		return st, false, err
	}
	if ls.l.Deref {
		if _, lerr := ls.Dir.Lstat(name); lerr == nil { // still there
			return st, false, fmt.Errorf("-L: the symlink's target does not exist: %w", err)
		}
	}
	return st, false, nil
}

// Own reports whether the entry i, of stat st, is the hash cache's file
// or one of its journals: no walk copies them.
func (ls *Listing) Own(i int, st *fileio.Stat) bool {
	return st.IsRegular() && st.Ino != 0 && (ls.l.Own.IsFile(st) || ls.l.Own.Journal(ls.Dir, ls.Names[i].Name))
}

// Dests are the directories a run writes in (the destination root and
// those below it), which a walk of the sources never enters: one reached
// through -L (a symlink to a directory above DEST) or a mount would copy
// the copy. Every destination directory is noted before the source
// directories below its own source are listed, so a source directory
// that leads back to one the copy is being written into is always
// caught. The zero value is empty; it is safe for concurrent use.
type Dests struct{ m sync.Map }

// Note notes d as a directory the run writes in.
func (s *Dests) Note(d *fileio.Dir) {
	if st, err := d.Stat(); err == nil && st.Ino != 0 {
		s.m.Store(Inode{st.Dev, st.Ino}, true)
	}
}

// Holds says whether the source directory of stat st is one the run
// writes in.
func (s *Dests) Holds(st *fileio.Stat) bool {
	if st.Ino == 0 {
		return false
	}
	_, ok := s.m.Load(Inode{st.Dev, st.Ino})
	return ok
}
