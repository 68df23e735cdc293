package hashcache

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// op is one request to the writer: a put, a delete, or (done set) a flush.
type op struct {
	key  string
	val  []byte // encoded entry; nil with del
	del  bool
	at   int64 // when a delete was asked for, for the merge of a journal
	done chan error
}

// queue hands requests to the writer a batch at a time: Put appends to the
// batch being filled under a mutex, and the writer is woken only when a
// batch is full, when the first entry of a batch needs the timer started,
// and for Flush and Close. Waking it for every entry would cost a futex
// wake per Put (about a microsecond of system call on a VM, and more than
// the rest of Put).
type queue struct {
	mu      sync.Mutex
	room    sync.Cond // signalled when the writer takes batches
	pending []op      // the batch being filled
	full    [][]op    // batches for the writer, in order
	armed   bool      // the writer has been told pending is not empty
	closed  bool
	kick    chan struct{} // capacity 1: wake the writer
}

// Put queues e to be stored for path. It returns at once unless four full
// batches (4,000 entries) already wait for the writer, in which case it
// waits for a commit: entries are never dropped to keep up. The writer
// commits every 1,000 entries, and 200 ms after the first entry of a batch,
// whichever comes first; Flush waits for that.
//
// On a read-only cache Put stores nothing and Flush and Close report
// ErrReadOnly; on an unused one (see ErrNewerSchema, ErrCorrupt) it stores
// nothing, as the warning said. A path that cannot be a key (empty, or
// longer than 32 KiB) is ignored: Get never finds it. Put after Close
// panics.
func (c *Cache) Put(path string, e Entry) {
	if !validKey(path) {
		return
	}
	c.enqueue(op{key: path, val: encodeValue(make([]byte, 0, maxValLen), path, e)})
}

// Delete queues the removal of path's entry, as Put queues a store.
func (c *Cache) Delete(path string) {
	if !validKey(path) {
		return
	}
	c.enqueue(op{key: path, del: true, at: time.Now().UnixNano()})
}

func (c *Cache) enqueue(o op) {
	if c.readOnly {
		c.setErr(ErrReadOnly)
		return
	}
	q := &c.q
	q.mu.Lock()
	for len(q.full) >= maxQueued && !q.closed {
		q.room.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		panic("hashcache: Put or Delete after Close")
	}
	if !c.writing {
		q.mu.Unlock()
		return
	}
	q.pending = append(q.pending, o)
	wake := false
	switch {
	case len(q.pending) >= batchSize:
		q.full = append(q.full, q.pending)
		q.pending = make([]op, 0, batchSize)
		wake = true
	case !q.armed:
		q.armed = true
		wake = true
	}
	q.mu.Unlock()
	if wake {
		q.wake()
	}
}

func (q *queue) wake() {
	select {
	case q.kick <- struct{}{}:
	default: // a wake-up is already due
	}
}

// Flush waits until everything queued before it is committed (synced to
// disk), and returns the first commit error of the cache's life, if any.
// After a failed commit the writer discards what follows: the cache is an
// optimisation, and the files will simply be read again next time.
func (c *Cache) Flush() error {
	q := &c.q
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	if !c.writing {
		q.mu.Unlock()
		return c.firstErr()
	}
	done := make(chan error, 1)
	if len(q.pending) > 0 {
		q.full = append(q.full, q.pending)
		q.pending = make([]op, 0, batchSize)
	}
	q.full = append(q.full, []op{{done: done}})
	q.mu.Unlock()
	q.wake()
	return <-done
}

// Close commits what is queued, closes the file and returns what Flush
// would, plus any error closing. A cache that wrote to a journal (another
// process had the file open) merges it, and the journals of processes that
// finished meanwhile, if it now has the file alone; otherwise it leaves them
// to whichever process next has. A cache found broken during the run is
// moved aside now (see Warnings). Put, Delete and Flush must not be called
// after Close.
func (c *Cache) Close() error {
	q := &c.q
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.closed = true
	if len(q.pending) > 0 {
		q.full = append(q.full, q.pending)
		q.pending = nil
	}
	q.room.Broadcast()
	q.mu.Unlock()
	if c.writing {
		q.wake()
		<-c.writerDone
	}
	if c.watchStop != nil {
		close(c.watchStop)
		<-c.watchDone
	}
	defer c.users.Close()
	errs := []error{c.firstErr()}
	c.dbMu.Lock()
	defer c.dbMu.Unlock()
	c.closeOthers()
	if c.writing && c.readable() && (c.jn != nil || len(c.journalPaths()) > 0) {
		// What is in this process's journal, and in those of processes
		// that finished, goes to the main file if it can be had alone
		// now; the shared lock on it is let go for that. A long merge
		// goes in parts, letting the file go in between: a process that
		// wants it then gets it, and the rest is left to a later one.
		c.closeMain()
		for c.storeAlone(nil, false) {
			time.Sleep(mergePause)
		}
	}
	if c.jn != nil {
		c.jn.close(false) // finished: the next process to have the file alone merges it
		c.jn = nil
	}
	if c.db == nil {
		if c.broken.Load() && !c.readOnly {
			c.setAside()
		}
		return errors.Join(errs...)
	}
	// A broken file is renamed while we still hold its lock (Unix allows
	// that), so that no other fastcopy starts using it in between; where
	// renaming an open file fails, after closing.
	broken := c.broken.Load() && !c.readOnly
	var aside string
	var asideErr error
	if broken {
		aside, asideErr = moveAside(c.path, time.Now())
	}
	if err := c.closeMain(); err != nil {
		errs = append(errs, fmt.Errorf("hash cache %q: close: %w", c.path, err))
	}
	if broken && asideErr != nil {
		aside, asideErr = moveAside(c.path, time.Now())
	}
	switch {
	case broken && asideErr == nil:
		c.warn(fmt.Errorf("%w: %q moved to %q", ErrCorrupt, c.path, aside))
	case broken:
		c.warn(fmt.Errorf("%w: %q could not be moved aside: %v", ErrCorrupt, c.path, asideErr))
	}
	return errors.Join(errs...)
}

// setAside moves a broken main file aside, when this cache had no handle
// of it left.
func (c *Cache) setAside() {
	if aside, err := moveAside(c.path, time.Now()); err == nil {
		c.warn(fmt.Errorf("%w: %q moved to %q", ErrCorrupt, c.path, aside))
	} else if !errors.Is(err, fs.ErrNotExist) {
		c.warn(fmt.Errorf("%w: %q could not be moved aside: %v", ErrCorrupt, c.path, err))
	}
}

// closeMain closes the main file's handle, read-only or held for
// writing. dbMu must be held.
func (c *Cache) closeMain() error {
	c.holding = false
	if c.db == nil {
		return nil
	}
	var err error
	if perr := protect(func() { err = c.db.Close() }); perr != nil {
		err = perr
	}
	c.db = nil
	return err
}

// reopenMain opens the main file read-only again after a commit, waiting
// for another process's commit or merge as Open does. Where that fails,
// lookups answer from the journals alone until the next commit tries
// again. dbMu must be held.
func (c *Cache) reopenMain() {
	c.reopens.Add(1)
	o := openDB(c.path, Options{ReadOnly: true, LockTimeout: max(c.lockTimeout, sharedLockGrace)})
	if o.err != nil || o.openErr != nil {
		o.release()
		return
	}
	if state, _, _ := checkSchema(o.db, o.file); state != stateOK {
		o.release() // a commit that has the file alone sets it right
		return
	}
	c.db = o.db
}

// writer is the only goroutine that writes to the database. It commits one
// transaction per batch: a synced transaction costs about as much for one
// entry as for a thousand.
func (c *Cache) writer() {
	defer close(c.writerDone)
	q := &c.q
	timer := time.NewTimer(batchDelay)
	timer.Stop()
	timing := false
	for {
		fired := false
		select {
		case <-q.kick:
		case <-timer.C:
			fired, timing = true, false
		}
		q.mu.Lock()
		batches := q.full
		q.full = nil
		if fired && len(q.pending) > 0 {
			batches = append(batches, q.pending)
			q.pending = make([]op, 0, batchSize)
		}
		if fired {
			q.armed = false
		}
		start := q.armed && !timing
		closed := q.closed
		q.room.Broadcast()
		q.mu.Unlock()
		if start {
			timer.Reset(batchDelay)
			timing = true
		}
		// Batches that waited together are committed together, up to a
		// Flush: a run that stores many entries at once (its sources' at
		// the end) pays one synced transaction for them, not one per
		// thousand.
		var merged []op
		for _, b := range batches {
			if b[0].done != nil {
				if len(merged) > 0 {
					c.commit(merged)
					merged = nil
				}
				b[0].done <- c.firstErr()
				continue
			}
			merged = append(merged, b...)
		}
		if len(merged) > 0 {
			c.commit(merged)
		}
		if closed {
			timer.Stop()
			return
		}
	}
}

// commit stores one batch, keys in order (bbolt inserts sorted keys several
// times faster); the sort is stable, so a put and a delete of the same path
// keep their order. The main file is let go (its shared lock with it) and
// taken alone for the commit when no other process has it open; otherwise
// the batch goes to this process's journal. Lookups wait meanwhile.
func (c *Cache) commit(batch []op) {
	if c.firstErr() != nil || !c.readable() {
		return
	}
	slices.SortStableFunc(batch, func(a, b op) int { return strings.Compare(a.key, b.key) })
	c.dbMu.Lock()
	defer c.dbMu.Unlock()
	defer c.commits.Add(1)
	if c.holding && c.users.Alone() {
		if _, err := c.commitAlone(c.db, batch); err != nil {
			c.letGo()
			c.commitFailed(err)
		}
		return
	}
	c.closeMain()
	c.storeAlone(batch, c.users.Alone())
	if !c.holding {
		c.reopenMain()
	}
}

// commitFailed records a failed commit to the main file: a bad page
// marks the cache broken, anything else stops storing.
func (c *Cache) commitFailed(err error) {
	if isPanic(err) || errors.Is(err, errNoBucket) {
		c.markBroken(err)
		return
	}
	c.setErr(fmt.Errorf("hash cache %q: commit: %w", c.path, err))
}

// storeAlone commits batch (and the journals) to the main file if this
// process can have it alone, and to its journal otherwise. dbMu must be
// held and the main file closed. more reports that the file was had alone
// and journal entries are left to merge. With keep (no other cache of the
// file is open), the file had alone stays open for the next commits
// (holding).
func (c *Cache) storeAlone(batch []op, keep bool) (more bool) {
	for attempt := 1; attempt <= 3; attempt++ {
		held, state, err := c.exclusive(func(db *bolt.DB) error {
			var err error
			more, err = c.commitAlone(db, batch)
			return err
		}, keep)
		switch {
		case err != nil:
			c.commitFailed(err)
			return false
		case state == stateCorrupt:
			continue // moved aside: a new one next
		case state == stateNewer:
			c.setErr(fmt.Errorf("hash cache %q: %w: nothing more stored", c.path, ErrNewerSchema))
			return false
		case held:
			return more
		}
		if len(batch) == 0 {
			return false
		}
		if c.jn == nil {
			if c.jn, err = c.newJournal(); err != nil {
				c.setErr(fmt.Errorf("hash cache %q: journal: %w", c.path, err))
				return false
			}
		}
		if err := c.jn.write(batch); err != nil {
			c.setErr(fmt.Errorf("hash cache %q: journal commit: %w", c.path, err))
		}
		return false
	}
	return false
}
