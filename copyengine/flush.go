package copyengine

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// filesystems maps every filesystem the run writes in to a directory on
// it, through which it is flushed: DEST's own, and any mounted inside DEST
// (a disk mounted at DEST/photos is written by the same run, and a syncfs
// of DEST's filesystem flushes nothing of it).
type filesystems struct {
	mu  sync.Mutex
	m   map[uint64]*fileio.Dir
	own []*fileio.Dir // opened here, closed by close
}

// add notes that dev is written through the directory d. The first
// directory seen on a filesystem is kept (opened again when dup, since the
// caller closes its own).
func (f *filesystems) add(dev uint64, d *fileio.Dir, dup bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.m[dev]; ok {
		return
	}
	if dup {
		again, err := d.OpenSub(".")
		if err != nil {
			return // its files are flushed one by one (flushBatch)
		}
		f.own = append(f.own, again)
		d = again
	}
	if f.m == nil {
		f.m = map[uint64]*fileio.Dir{}
	}
	f.m[dev] = d
}

// dir returns the directory dev is flushed through.
func (f *filesystems) dir(dev uint64) (*fileio.Dir, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.m[dev]
	return d, ok
}

// all returns every filesystem noted, in a stable order.
func (f *filesystems) all() []*fileio.Dir {
	f.mu.Lock()
	defer f.mu.Unlock()
	devs := make([]uint64, 0, len(f.m))
	for dev := range f.m {
		devs = append(devs, dev)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	out := make([]*fileio.Dir, len(devs))
	for i, dev := range devs {
		out[i] = f.m[dev]
	}
	return out
}

func (f *filesystems) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.own {
		d.Close()
	}
	f.own, f.m = nil, nil
}

// flushBatch makes a batch's data durable before any of its files is read
// back or takes its final name, in every mode: one syncfs for each
// filesystem the batch wrote in (a per-file fsync costs ~15x on many small
// files). Where a filesystem has no flush of its own that waits, each file
// on it is flushed instead, slower but as durable. It returns the files to
// commit: those it failed or discarded are left out.
func (c *committer) flushBatch(batch []*pending) []*pending {
	e := c.e
	if e.ctx.Err() != nil {
		for _, p := range batch {
			c.discard(p)
		}
		return nil
	}
	at := time.Now() // what was placed before is flushed with this batch
	flushed := map[uint64]error{}
	for _, p := range batch {
		if !p.dst.devOK {
			continue
		}
		if _, done := flushed[p.dst.dev]; done {
			continue
		}
		err := fileio.ErrUnsupported
		if d, ok := e.written.dir(p.dst.dev); ok {
			err = d.Syncfs()
		}
		flushed[p.dst.dev] = err
	}
	kept := batch[:0]
	for _, p := range batch {
		err := fileio.ErrUnsupported
		if p.dst.devOK {
			err = flushed[p.dst.dev]
		}
		if err != nil && fileio.IsFallback(err) {
			err = c.syncTemp(p)
		}
		if err != nil {
			c.failPending(p, fmt.Errorf("flushing to stable storage: %w", err))
			continue
		}
		kept = append(kept, p)
	}
	c.batchFlushed(at, flushed)
	return kept
}

// syncTemp flushes one temporary file to stable storage.
func (c *committer) syncTemp(p *pending) error {
	f, err := p.dst.d.Open(p.tmp, false)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// flushDirs makes the renames and directory metadata durable on every
// filesystem the run wrote in: one syncfs each, or where the platform has
// none that waits (it says so with a fallback error), an fsync of every
// destination directory. The files' data was flushed by the committer
// already.
func (c *committer) flushDirs() error {
	e := c.e
	fallback := false
	for _, d := range e.written.all() {
		err := d.Syncfs()
		if err != nil && fileio.IsFallback(err) {
			fallback = true
			continue
		}
		if err != nil {
			return err
		}
	}
	if !fallback {
		return nil
	}
	if err := e.dstRoot.AsFile().Sync(); err != nil {
		return err
	}
	for _, dm := range c.dirs {
		if dm.dstRel == "" {
			continue
		}
		d, err := e.staged.openDst(dm.dstRel)
		if err != nil {
			return err
		}
		err = d.AsFile().Sync()
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// srcRemovals are the source directories --move removed entries from (a
// file, a name of one, a directory left empty): what makes those removals
// durable before the run reports success (flushSources).
type srcRemovals struct {
	fs   filesystems       // one directory per source filesystem removed from, held open
	dirs map[devIno]string // every directory removed from, by identity: its path
	// fuse notes the filesystems served by a FUSE driver, asked while a
	// directory on it was there (fstatfs of a directory removed since
	// fails on FUSE, and syncfs there flushes nothing anyway).
	fuse map[uint64]bool
	// dirty are the directories on FUSE removed from, open: each is
	// flushed as it is closed (leave).
	dirty map[*fileio.Dir]bool
	err   error // why a removal's filesystem is not known, or its flush failed
}

// removedIn notes that --move removed an entry of the source directory d.
func (mv *mover) removedIn(d *fileio.Dir) {
	r := &mv.removed
	st, err := d.Stat()
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("cannot tell which filesystem %q is on, to flush what was removed from it: %w", d.Path(), err)
		}
		return
	}
	if _, known := r.fuse[st.Dev]; !known {
		if r.fuse == nil {
			r.fuse = map[uint64]bool{}
		}
		r.fuse[st.Dev] = d.IsFUSE()
	}
	if r.fuse[st.Dev] {
		if r.dirty == nil {
			r.dirty = map[*fileio.Dir]bool{}
		}
		r.dirty[d] = true
		return
	}
	r.fs.add(st.Dev, d, true)
	if _, ok := r.fs.dir(st.Dev); !ok && r.err == nil {
		r.err = fmt.Errorf("cannot open %q again, to flush what was removed from it", d.Path())
	}
	if r.dirs == nil {
		r.dirs = map[devIno]string{}
	}
	r.dirs[devIno{st.Dev, st.Ino}] = d.Path()
}

// leave closes a source directory finish or removeDirs opened. One on
// FUSE that entries were removed from is flushed first (but with
// --no-sync): fsync'ed while it is still the directory they were removed
// from, with no identity to check again (exfat-fuse renumbers the inodes
// the kernel forgets), and before it is removed itself, left empty.
func (mv *mover) leave(d *fileio.Dir) {
	r := &mv.removed
	if r.dirty[d] {
		delete(r.dirty, d)
		if !mv.e.opt.NoSync {
			if err := d.AsFile().Sync(); err != nil && r.err == nil {
				r.err = fmt.Errorf("flushing the removals from %q: %w", d.Path(), err)
			}
		}
	}
	d.Close()
}

// flushSources makes --move's removals durable: one syncfs of each source
// filesystem an entry was removed from (a disk mounted inside a source
// tree is one of its own), through the directory the removal was made in.
// On FUSE, whose drivers take no syncfs, each directory removed from was
// fsync'ed as it was closed (leave). Where the platform has no syncfs that
// waits, every directory entries were removed from is fsync'ed, opened
// again and checked to be that directory by (st_dev, st_ino); a directory
// gone since (removed, left empty) is left out: its removal is flushed
// with its parent's.
func (mv *mover) flushSources() error {
	r := &mv.removed
	if r.err != nil {
		return r.err
	}
	devs := make([]uint64, 0, len(r.fuse))
	for dev := range r.fuse {
		devs = append(devs, dev)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	for _, dev := range devs {
		if r.fuse[dev] {
			continue // flushed directory by directory (leave)
		}
		// The directory held may be gone by now (left empty and removed):
		// its filesystem is known by the dev it was noted under.
		if d, ok := r.fs.dir(dev); ok {
			err := d.Syncfs()
			if err == nil {
				continue
			}
			if !fileio.IsFallback(err) {
				return err
			}
		}
		if err := mv.syncDirsOn(dev); err != nil {
			return err
		}
	}
	return nil
}

// syncDirsOn fsyncs each directory entries were removed from on the
// filesystem dev.
func (mv *mover) syncDirsOn(dev uint64) error {
	var ids []devIno
	for id := range mv.removed.dirs {
		if id.dev == dev {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].ino < ids[j].ino })
	for _, id := range ids {
		p := mv.removed.dirs[id]
		d, err := mv.e.opt.openRoot(p)
		if fileio.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		st, err := d.Stat()
		if err == nil && (devIno{st.Dev, st.Ino}) != id {
			err = fmt.Errorf("the source directory %q was replaced since entries were removed from it: their removal cannot be flushed", p)
		}
		if err == nil {
			err = d.AsFile().Sync()
		}
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *srcRemovals) close() { r.fs.close() }
