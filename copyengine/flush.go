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
			err = fileio.Syncfs(d)
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
		err := fileio.Syncfs(d)
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
