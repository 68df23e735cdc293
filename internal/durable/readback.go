package durable

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/refusal"
	"github.com/fastcopy/fastcopy/verify"
)

// Config is the run's whole input to its read-backs.
type Config struct {
	Ctx    context.Context // the run: a cancel stops a read-back and Prefetch
	Device bool            // --verify=device: the bytes are read from the device, not the page cache
	// PrefetchMax is the largest file Prefetch opens ahead: a larger one
	// is read in several calls, and the kernel's readahead keeps ahead.
	PrefetchMax int64
	Budget      Budget         // what descriptors Prefetch opens count against
	Sink        verify.Sink    // told each piece read back (--bwlimit, the run's stop)
	Stats       *outcome.Stats // BytesVerified and BytesRead count what is read back
	// NoDrop is told when the platform cannot drop a file's cached pages:
	// it is read back through the page cache.
	NoDrop func()
	// Res is the resolution of a filesystem's times, in nanoseconds
	// (Placed: whether a rename moved a file's mtime).
	Res func(dev uint64) int64
	// KeepBtime gives name in dd the creation time of st, where kept
	// (SetTimes, where times are set by name).
	KeepBtime func(dd *fileio.Dir, name string, st *fileio.Stat)
}

// Temp is one temporary to read back.
type Temp struct {
	Path     string      // the file's path, as a mismatch names it
	Dir      *fileio.Dir // the directory it is in
	Name     string      // its temporary name there
	Size     int64       // what was written
	Sum      verify.Sum  // the source's digest
	Dev, Ino uint64      // the inode written (both zero: not known)
	Checked  bool        // read back already, as it was written
	Kept     *Kept       // what it keeps open
	ReadAt   *time.Time  // set to when its read-back began
	// Src is the source's stat: its times are given to the copy.
	Src *fileio.Stat
	// Linked: the temporary is a hard link to a verified copy, whose
	// times are the target's already.
	Linked bool
}

// Workers is the read-back concurrency for a run of jobs copy workers:
// parallel reads pay off on SSDs (the read-back of small files is one
// device read each).
func Workers(jobs int) int {
	if jobs > 8 {
		return jobs
	}
	return 8
}

// GroupMax is the most files a read-back worker takes at once: with
// --verify=device it asks for all of them to be read from the device before
// it hashes the first (Prefetch).
const GroupMax = 16

// Groups cuts a flushed batch into the groups the read-back workers take,
// small enough that every worker gets one.
func Groups[T any](batch []T, workers int) [][]T {
	size := min(GroupMax, max(1, (len(batch)+workers-1)/workers))
	var groups [][]T
	for len(batch) > 0 {
		n := min(size, len(batch))
		groups = append(groups, batch[:n:n])
		batch = batch[n:]
	}
	return groups
}

// Pool is the read-back workers: each takes the groups sent in turn.
type Pool[T any] struct {
	in chan []T
	wg sync.WaitGroup
}

// StartPool starts workers goroutines, each running worker until the
// groups it takes from in run out; room groups may wait to be taken, so
// that the sender can flush the next batch while one is read back.
func StartPool[T any](workers, room int, worker func(in <-chan []T)) *Pool[T] {
	p := &Pool[T]{in: make(chan []T, room)}
	for w := 0; w < workers; w++ {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			worker(p.in)
		}()
	}
	return p
}

// Send hands g to the workers.
func (p *Pool[T]) Send(g []T) { p.in <- g }

// Stop waits until the workers have taken and done every group sent.
func (p *Pool[T]) Stop() {
	close(p.in)
	p.wg.Wait()
}

// Prefetches reports whether Prefetch does anything in this run: with
// --verify=device, where the platform can ask for a file's pages ahead.
func (c *Config) Prefetches() bool {
	return c.Device && fileio.CanPrefetch && c.Ctx.Err() == nil
}

// Prefetch opens a small temporary for its read-back, drops its cached
// pages and asks the device for it (POSIX_FADV_WILLNEED), so that a
// worker has all of its group's reads in flight at once instead of one
// device round trip at a time. The pages then come from the device as much
// as a plain read after the drop would. A file it cannot prepare is left
// to ReadBack, which opens it and reports what it finds. It returns false
// when the budget has no descriptor to spare: the rest are opened in turn.
func (c *Config) Prefetch(t Temp) bool {
	if t.Checked || t.Size == 0 || t.Size > c.PrefetchMax {
		return true
	}
	if !c.Budget.Take() {
		return false
	}
	readAt := time.Now()
	f, err := t.Dir.OpenNoAtime(t.Name)
	if err != nil {
		c.Budget.Give()
		return true
	}
	if err := f.DropCache(); err != nil {
		f.Close()
		c.Budget.Give()
		return true
	}
	f.Prefetch(0, t.Size)
	t.Kept.back, t.Kept.backOf, t.Kept.backAt = f, c.Budget, readAt
	return true
}

// ReadBack reads the temporary back (from the device when asked: its
// cached pages, clean after the flush, are dropped first unless Prefetch
// did) and compares it with the source's digest. It answers nil when they
// match, the descriptor it read then held in t.Kept; a *refusal.Mismatch
// when the file holds other bytes or is not the inode written; or the
// error that stopped the read. readAt is when the read began (zero when it
// did not).
func (c *Config) ReadBack(t Temp, buf []byte) (readAt time.Time, err error) {
	f, readAt := t.Kept.takeBack()
	ahead := f != nil
	if !ahead {
		readAt = time.Now()
		if f, err = t.Dir.OpenNoAtime(t.Name); err != nil {
			return readAt, err
		}
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	if c.Device && !ahead { // Prefetch dropped them
		if err := f.DropCache(); err != nil {
			if !fileio.IsFallback(err) {
				return readAt, err
			}
			c.NoDrop()
		}
	}
	st, err := f.Stat()
	if err != nil {
		return readAt, err
	}
	if (t.Dev != 0 || t.Ino != 0) && (st.Dev != t.Dev || st.Ino != t.Ino) {
		// Not the file written: someone swapped the temporary.
		return readAt, &refusal.Mismatch{Path: t.Path, Cause: fmt.Sprintf("%q was replaced by another file before it was read back", t.Name)}
	}
	t.Kept.CloseWritten() // f holds the inode from here on
	got, n, err := verify.Stream(f, st.Size, false, buf, c.Sink)
	if err != nil {
		return readAt, err
	}
	if n != t.Size || st.Size != t.Size || got != t.Sum {
		return readAt, &refusal.Mismatch{Path: t.Path, Want: verify.Hex(t.Sum), Got: verify.Hex(got)}
	}
	c.Stats.BytesVerified.Add(n)
	c.Stats.BytesRead.Add(n)
	t.Kept.Hold(f, nil)
	keep = true
	return readAt, nil
}
