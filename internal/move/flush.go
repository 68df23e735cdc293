package move

import (
	"fmt"
	"sort"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// removals are the source directories --move removed entries from (a
// file, a name of one, a directory left empty): what makes those removals
// durable before the run reports success (Flush).
type removals struct {
	fs   devDirs           // one directory per source filesystem removed from, held open
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

// devDirs holds one directory on each filesystem, opened again, through
// which it is flushed.
type devDirs struct {
	m   map[uint64]*fileio.Dir
	own []*fileio.Dir
}

// add notes that dev is removed from through d (the first one seen on it
// is opened again and kept).
func (f *devDirs) add(dev uint64, d *fileio.Dir) {
	if _, ok := f.m[dev]; ok {
		return
	}
	again, err := d.OpenSub(".")
	if err != nil {
		return
	}
	f.own = append(f.own, again)
	if f.m == nil {
		f.m = map[uint64]*fileio.Dir{}
	}
	f.m[dev] = again
}

func (f *devDirs) close() {
	for _, d := range f.own {
		d.Close()
	}
	f.own, f.m = nil, nil
}

// removedIn notes that --move removed an entry of the source directory d.
func (j *Journal) removedIn(d *fileio.Dir) {
	r := &j.removed
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
		r.fuse[st.Dev] = fileio.IsFUSE(d)
	}
	if r.fuse[st.Dev] {
		if r.dirty == nil {
			r.dirty = map[*fileio.Dir]bool{}
		}
		r.dirty[d] = true
		return
	}
	r.fs.add(st.Dev, d)
	if _, ok := r.fs.m[st.Dev]; !ok && r.err == nil {
		r.err = fmt.Errorf("cannot open %q again, to flush what was removed from it", d.Path())
	}
	if r.dirs == nil {
		r.dirs = map[devIno]string{}
	}
	r.dirs[devIno{st.Dev, st.Ino}] = d.Path()
}

// leave closes a source directory Finish opened. One on FUSE that
// entries were removed from is flushed first (but with NoSync): fsync'ed
// while it is still the directory they were removed from, with no
// identity to check again (exfat-fuse renumbers the inodes the kernel
// forgets), and before it is removed itself, left empty.
func (j *Journal) leave(d *fileio.Dir) {
	r := &j.removed
	if r.dirty[d] {
		delete(r.dirty, d)
		if !j.cfg.NoSync {
			if err := d.AsFile().Sync(); err != nil && r.err == nil {
				r.err = fmt.Errorf("flushing the removals from %q: %w", d.Path(), err)
			}
		}
	}
	d.Close()
}

// Flush makes the removals of Finish durable: one syncfs of each source
// filesystem an entry was removed from (a disk mounted inside a source
// tree is one of its own), through the directory the removal was made in.
// On FUSE, whose drivers take no syncfs, each directory removed from was
// fsync'ed as it was closed (leave). Where the platform has no syncfs that
// waits, every directory entries were removed from is fsync'ed, opened
// again and checked to be that directory by (st_dev, st_ino); a directory
// gone since (removed, left empty) is left out: its removal is flushed
// with its parent's.
func (j *Journal) Flush() error {
	if j == nil {
		return nil
	}
	r := &j.removed
	if r.err != nil {
		return r.err
	}
	devs := make([]uint64, 0, len(r.fuse))
	for dev := range r.fuse {
		devs = append(devs, dev)
	}
	sort.Slice(devs, func(a, b int) bool { return devs[a] < devs[b] })
	for _, dev := range devs {
		if r.fuse[dev] {
			continue // flushed directory by directory (leave)
		}
		// The directory held may be gone by now (left empty and removed):
		// its filesystem is known by the dev it was noted under.
		if d, ok := r.fs.m[dev]; ok {
			err := fileio.Syncfs(d)
			if err == nil {
				continue
			}
			if !fileio.IsFallback(err) {
				return err
			}
		}
		if err := j.syncDirsOn(dev); err != nil {
			return err
		}
	}
	return nil
}

// syncDirsOn fsyncs each directory entries were removed from on the
// filesystem dev.
func (j *Journal) syncDirsOn(dev uint64) error {
	var ids []devIno
	for id := range j.removed.dirs {
		if id.dev == dev {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a].ino < ids[b].ino })
	for _, id := range ids {
		p := j.removed.dirs[id]
		d, err := j.cfg.OpenDir(p)
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

// Close releases the directories Flush flushes through.
func (j *Journal) Close() {
	if j != nil {
		j.removed.fs.close()
	}
}
