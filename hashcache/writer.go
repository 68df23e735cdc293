package hashcache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// writer is the goroutine that commits what Put and Delete queue, with the
// queue it takes it from: to the main file (mainFile, under its lock) or to
// this process's journal (journals).
type writer struct {
	path     string
	readOnly bool
	rep      *report
	main     *mainFile
	js       *journals

	running bool // the goroutine runs: not read-only, not unused (set before Open returns)
	q       queue
	done    chan struct{} // closed when the goroutine ends
	commits atomic.Int64  // write transactions, for tests
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
	c.writer.enqueue(op{key: path, val: encodeValue(make([]byte, 0, maxValLen), path, e)})
}

// Delete queues the removal of path's entry, as Put queues a store.
func (c *Cache) Delete(path string) {
	if !validKey(path) {
		return
	}
	c.writer.enqueue(op{key: path, del: true, at: time.Now().UnixNano()})
}

// start starts the goroutine.
func (w *writer) start() {
	w.q.kick = make(chan struct{}, 1)
	w.done = make(chan struct{})
	w.running = true
	go w.run()
}

func (w *writer) enqueue(o op) {
	if w.readOnly {
		w.rep.setErr(ErrReadOnly)
		return
	}
	q := &w.q
	q.mu.Lock()
	for len(q.full) >= maxQueued && !q.closed {
		q.room.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		panic("hashcache: Put or Delete after Close")
	}
	if !w.running {
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
	return c.writer.flush()
}

func (w *writer) flush() error {
	q := &w.q
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	if !w.running {
		q.mu.Unlock()
		return w.rep.firstErr()
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
	if !c.writer.stop() {
		return ErrClosed
	}
	c.main.stopWatch()
	defer c.main.closeUsers()
	err := c.report.firstErr()
	c.main.mu.Lock()
	defer c.main.mu.Unlock()
	c.journals.closeOthers()
	if c.writer.running && c.main.readable() && c.journals.unmerged() {
		// What is in this process's journal, and in those of processes
		// that finished, goes to the main file if it can be had alone
		// now; the shared lock on it is let go for that. A long merge
		// goes in parts, letting the file go in between: a process that
		// wants it then gets it, and the rest is left to a later one.
		c.main.closeMain()
		for c.writer.storeAlone(nil, false) {
			time.Sleep(mergePause)
		}
	}
	c.journals.closeOwn() // finished: the next process to have the file alone merges it
	return errors.Join(err, c.main.close())
}

// stop closes the queue, commits what it holds and waits for the
// goroutine to end. It reports false when the queue was closed already.
func (w *writer) stop() bool {
	q := &w.q
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.closed = true
	if len(q.pending) > 0 {
		q.full = append(q.full, q.pending)
		q.pending = nil
	}
	q.room.Broadcast()
	q.mu.Unlock()
	if w.running {
		q.wake()
		<-w.done
	}
	return true
}

// closed reports whether Close was called.
func (w *writer) closed() bool {
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	return w.q.closed
}

// run is the writer goroutine, the only one that writes to the database.
// It commits one transaction per batch: a synced transaction costs about
// as much for one entry as for a thousand.
func (w *writer) run() {
	defer close(w.done)
	q := &w.q
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
					w.commit(merged)
					merged = nil
				}
				b[0].done <- w.rep.firstErr()
				continue
			}
			merged = append(merged, b...)
		}
		if len(merged) > 0 {
			w.commit(merged)
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
func (w *writer) commit(batch []op) {
	if w.rep.firstErr() != nil || !w.main.readable() {
		return
	}
	slices.SortStableFunc(batch, func(a, b op) int { return strings.Compare(a.key, b.key) })
	m := w.main
	m.mu.Lock()
	defer m.mu.Unlock()
	defer w.commits.Add(1)
	if db := m.held(); db != nil && m.alone() {
		if _, err := w.js.commitAlone(db, batch); err != nil {
			m.letGo()
			w.commitFailed(err)
		}
		return
	}
	m.closeMain()
	w.storeAlone(batch, m.alone())
	if m.held() == nil {
		m.reopenMain()
	}
}

// commitFailed records a failed commit to the main file: a bad page
// marks the cache broken, anything else stops storing.
func (w *writer) commitFailed(err error) {
	if isPanic(err) || errors.Is(err, errNoBucket) {
		w.main.markBroken(err)
		return
	}
	w.rep.setErr(fmt.Errorf("hash cache %q: commit: %w", w.path, err))
}

// storeAlone commits batch (and the journals) to the main file if this
// process can have it alone, and to its journal otherwise. The main
// file's lock (mainFile.mu) must be held and the file closed. more reports that the file was had alone
// and journal entries are left to merge. With keep (no other cache of the
// file is open), the file had alone stays open for the next commits
// (holding).
func (w *writer) storeAlone(batch []op, keep bool) (more bool) {
	for attempt := 1; attempt <= 3; attempt++ {
		held, state, err := w.main.exclusive(func(db *bolt.DB) error {
			var err error
			more, err = w.js.commitAlone(db, batch)
			return err
		}, keep)
		switch {
		case err != nil:
			w.commitFailed(err)
			return false
		case state == stateCorrupt:
			continue // moved aside: a new one next
		case state == stateNewer:
			w.rep.setErr(fmt.Errorf("hash cache %q: %w: nothing more stored", w.path, ErrNewerSchema))
			return false
		case held:
			return more
		}
		if len(batch) == 0 {
			return false
		}
		j, err := w.js.ownJournal()
		if err != nil {
			w.rep.setErr(fmt.Errorf("hash cache %q: journal: %w", w.path, err))
			return false
		}
		if err := j.write(batch); err != nil {
			w.rep.setErr(fmt.Errorf("hash cache %q: journal commit: %w", w.path, err))
		}
		return false
	}
	return false
}
