package hashcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// mainFile is the main cache file's handle and its lifecycle: opened
// read-only, with a shared lock, for the life of the cache, taken alone for
// a commit (see exclusive), held for writing between commits while no
// other cache of the file is open (see watch), moved aside when found
// unreadable, and closed by Close.
type mainFile struct {
	path        string
	readOnly    bool
	lockTimeout time.Duration
	rep         *report   // the cache's warnings
	js          *journals // read with the main file, under mu

	// mu guards db and holding, and the journals (js) too: lookups hold
	// it for reading, the writer for writing while it swaps the main
	// file's handle for a commit.
	mu sync.RWMutex
	db *bolt.DB // the main file, read-only (shared lock) unless holding; nil when there is nothing to read
	// holding: db is the main file open for writing, had alone since a
	// commit found no other user (users), and kept for the next commits
	// until one comes (see watch).
	holding bool

	// users is held shared by every open cache of this file, so that one
	// can tell it is alone (nil where that cannot be told: never alone).
	users     *fileio.Presence
	watchStop chan struct{}
	watchDone chan struct{}

	// writable: open found a file this cache is to write, not read-only
	// and not unused (see ErrNewerSchema); Open starts the writer then.
	writable bool

	broken  atomic.Bool  // a transaction failed on a bad page
	reopens atomic.Int64 // read-only opens of the main file after a commit, for tests
}

// open makes one attempt. done is false when the file was moved aside (or
// replaced under us) and Open should try again.
//
// A writable cache first takes the file alone, once, without waiting: if
// no other process has it open, it is created or checked, set aside when
// unreadable, and the journals other processes left are merged into it.
// Then every cache, writable or not, opens the file read-only with a
// shared lock for the rest of its life, and the finished journals that
// could not be merged (another process has the file open) read-only too.
func (f *mainFile) open(first bool) (done bool, err error) {
	pre, preErr := os.Stat(f.path)
	if !f.readOnly {
		// What cannot be merged now stays where it is, and is read.
		held, state, err := f.exclusive(func(db *bolt.DB) error { _, _ = f.js.commitAlone(db, nil); return nil }, false)
		switch {
		case err != nil:
			return false, err
		case state == stateCorrupt:
			return false, nil // moved aside: again
		case state == stateNewer:
			return true, nil
		case held && state == stateFresh && first && preErr == nil && pre.Size() == 0:
			f.rep.warn(fmt.Errorf("%w: %q was empty; started a new one", ErrCorrupt, f.path))
		}
	}
	if f.readOnly && errors.Is(preErr, fs.ErrNotExist) {
		return true, nil // nothing cached yet
	}
	if f.readOnly && f.users == nil {
		// Before the shared lock: a cache that holds the file alone lets
		// it go only for one it can see. Where the presence file cannot be
		// had, waiting for the shared lock is all there is.
		f.users, _ = fileio.OpenPresence(f.path + usersSuffix)
	}
	wait := max(f.lockTimeout, sharedLockGrace)
	o := openDB(f.path, Options{ReadOnly: true, LockTimeout: wait})
	switch {
	case errors.Is(o.err, berrors.ErrTimeout):
		return false, fmt.Errorf("hash cache %q: %w (waited %v)", f.path, errCacheLocked, wait)
	case errors.Is(o.openErr, fs.ErrNotExist) && f.readOnly:
		return true, nil // removed (cache clear) since the stat
	case errors.Is(o.openErr, fs.ErrNotExist):
		return false, nil // removed since it was created: again
	case o.openErr != nil:
		return false, fmt.Errorf("hash cache: %w", o.openErr)
	case o.err != nil:
		return f.unusable(o, o.err)
	}
	state, ver, cause := checkSchema(o.db, o.file)
	switch state {
	case stateFresh:
		// Empty: being created by another process that has not written
		// it yet, or left so by one that died doing it. Nothing to read;
		// a writer's first commit makes it a cache.
		o.release()
		f.writable = !f.readOnly
		f.js.readFinished()
		return true, nil
	case stateNewer:
		o.release()
		f.warnNewer(ver)
		return true, nil
	case stateCorrupt:
		return f.unusable(o, cause)
	}
	f.db = o.db
	f.writable = !f.readOnly
	f.js.readFinished()
	if fi, err := o.file.Stat(); err == nil && fi.Size() >= readAheadMin {
		readAhead(f.path)
	}
	return true, nil
}

// unusable deals with a file found unreadable under the shared lock: a
// read-only cache ignores it; a writable one moves it aside when it can
// have it alone, and otherwise reads nothing from it and leaves that to the
// first commit that has it alone.
func (f *mainFile) unusable(o opened, cause error) (done bool, err error) {
	if f.readOnly {
		return f.corrupt(o, cause)
	}
	o.release()
	held, state, err := f.exclusive(func(*bolt.DB) error { return nil }, false)
	switch {
	case err != nil:
		return false, err
	case held:
		return state == stateNewer, nil // moved aside or fine now: again
	}
	f.rep.warn(fmt.Errorf("%w: %q: %v; not read for this run", ErrCorrupt, f.path, cause))
	f.writable = true
	return true, nil
}

// exclusive opens the main file alone, trying once, and runs fn on it: a
// new file is made a cache first, an unreadable one is moved aside
// (state stateCorrupt, fn not run), and one of a newer schema is left
// alone (stateNewer, with a warning, fn not run). held is false when
// another process has the file open.
//
// With keep, a file on which fn succeeded is kept open: it becomes db, and
// holding is set (mu must be held, and db closed).
func (f *mainFile) exclusive(fn func(*bolt.DB) error, keep bool) (held bool, state int, err error) {
	o := openDB(f.path, Options{LockTimeout: time.Nanosecond})
	switch {
	case errors.Is(o.err, berrors.ErrTimeout):
		return false, stateOK, nil
	case o.openErr != nil:
		return false, stateOK, fmt.Errorf("hash cache: %w", o.openErr)
	case o.err != nil:
		_, err := f.corrupt(o, o.err)
		return true, stateCorrupt, err
	}
	state, ver, cause := checkSchema(o.db, o.file)
	switch state {
	case stateFresh:
		if err := initSchema(o.db); err != nil {
			if isPanic(err) {
				_, err := f.corrupt(o, err)
				return true, stateCorrupt, err
			}
			o.release()
			return true, state, fmt.Errorf("hash cache %q: %w", f.path, err)
		}
	case stateNewer:
		o.release()
		f.warnNewer(ver)
		return true, state, nil
	case stateCorrupt:
		_, err := f.corrupt(o, cause)
		return true, state, err
	}
	err = fn(o.db)
	if err == nil && keep {
		f.db, f.holding = o.db, true
		return true, state, nil
	}
	o.release()
	return true, state, err
}

// corrupt deals with a file that is not a usable cache: ignored when
// read-only, else moved aside so that the next attempt starts afresh.
func (f *mainFile) corrupt(o opened, cause error) (done bool, err error) {
	if f.readOnly {
		o.release()
		f.rep.warn(fmt.Errorf("%w: %q: %v; not used for this run", ErrCorrupt, f.path, cause))
		return true, nil
	}
	// bbolt drops its lock when it gives up on a file; another fastcopy may
	// have moved it aside and started a new one since. Move only what we
	// looked at.
	if o.info != nil {
		if cur, err := os.Stat(f.path); err != nil || !os.SameFile(o.info, cur) {
			o.release()
			return false, nil
		}
	}
	aside, err := moveAside(f.path, time.Now())
	o.release()
	if err != nil {
		return false, fmt.Errorf("hash cache %q is unreadable (%v) and could not be moved aside: %w", f.path, cause, err)
	}
	f.rep.warn(fmt.Errorf("%w: %q: %v; moved to %q and started a new one", ErrCorrupt, f.path, cause, aside))
	return false, nil
}

func (f *mainFile) warnNewer(ver uint64) {
	f.rep.warn(fmt.Errorf("%w: %q has schema version %d, this fastcopy knows %d; not used for this run",
		ErrNewerSchema, f.path, ver, schemaVersion))
}

// watch lets the main file go as soon as another cache of it is open, so
// that it gets its shared lock: until then, this cache keeps the file
// open for writing from one commit to the next, instead of closing it,
// opening it alone, committing, closing it and opening it read-only again
// for each (which cost a tenth of a run of many small files). every is
// holdCheck as Open read it.
func (f *mainFile) watch(every time.Duration) {
	defer close(f.watchDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-f.watchStop:
			return
		case <-t.C:
		}
		f.mu.RLock()
		holding := f.holding
		f.mu.RUnlock()
		if holding && !f.users.Alone() {
			f.mu.Lock()
			if f.holding {
				f.letGo()
			}
			f.mu.Unlock()
		}
	}
}

// letGo turns the main file held for writing back into the read-only
// handle every cache keeps. mu must be held.
func (f *mainFile) letGo() {
	f.closeMain()
	f.reopenMain()
}

// markBroken stops all use of a database that failed on a bad page.
func (f *mainFile) markBroken(cause error) {
	if f.broken.CompareAndSwap(false, true) {
		what := "it will be moved aside when closed"
		if f.readOnly {
			what = "not used for the rest of the run"
		}
		f.rep.warn(fmt.Errorf("%w: %q: %v; %s", ErrCorrupt, f.path, cause, what))
	}
}

func (f *mainFile) readable() bool {
	return !f.broken.Load()
}

// view runs fn in read transactions of the main file and of the journals
// this process reads (its own and the finished ones of others): get
// answers from the journals first, newest first, then from the main file.
// main is the main file's files bucket, nil when there is none to read.
func (f *mainFile) view(fn func(get func(key []byte) []byte, main *bolt.Bucket)) {
	if !f.readable() {
		return
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	var txs []*bolt.Tx
	var err error
	if perr := protect(func() {
		defer func() {
			for _, tx := range txs {
				_ = tx.Rollback()
			}
		}()
		var main *bolt.Bucket
		if f.db != nil {
			tx, e := f.db.Begin(false)
			if e != nil {
				err = e
				return
			}
			txs = append(txs, tx)
			if main = tx.Bucket(bucketFiles); main == nil {
				err = errNoBucket
				return
			}
		}
		var js []jview
		for _, j := range f.js.reading() {
			tx, e := j.db.Begin(false)
			if e != nil {
				continue // a journal is an addition: without it, misses
			}
			txs = append(txs, tx)
			if v, ok := journalView(tx); ok {
				js = append(js, v)
			}
		}
		get := func(key []byte) []byte {
			for _, j := range js {
				if v := j.files.Get(key); v != nil {
					return v
				}
				if j.deleted.Get(key) != nil {
					return nil
				}
			}
			if main == nil {
				return nil
			}
			return main.Get(key)
		}
		fn(get, main)
	}); perr != nil {
		f.markBroken(perr)
	} else if errors.Is(err, errNoBucket) {
		f.markBroken(err)
	}
}

// closeMain closes the main file's handle, read-only or held for
// writing. mu must be held.
func (f *mainFile) closeMain() error {
	f.holding = false
	if f.db == nil {
		return nil
	}
	var err error
	if perr := protect(func() { err = f.db.Close() }); perr != nil {
		err = perr
	}
	f.db = nil
	return err
}

// reopenMain opens the main file read-only again after a commit, waiting
// for another process's commit or merge as Open does. Where that fails,
// lookups answer from the journals alone until the next commit tries
// again. mu must be held.
func (f *mainFile) reopenMain() {
	f.reopens.Add(1)
	o := openDB(f.path, Options{ReadOnly: true, LockTimeout: max(f.lockTimeout, sharedLockGrace)})
	if o.err != nil || o.openErr != nil {
		o.release()
		return
	}
	if state, _, _ := checkSchema(o.db, o.file); state != stateOK {
		o.release() // a commit that has the file alone sets it right
		return
	}
	f.db = o.db
}

// setAside moves a broken main file aside, when this cache had no handle
// of it left.
func (f *mainFile) setAside() {
	if aside, err := moveAside(f.path, time.Now()); err == nil {
		f.rep.warn(fmt.Errorf("%w: %q moved to %q", ErrCorrupt, f.path, aside))
	} else if !errors.Is(err, fs.ErrNotExist) {
		f.rep.warn(fmt.Errorf("%w: %q could not be moved aside: %v", ErrCorrupt, f.path, err))
	}
}

// startWatch starts watch, when this cache can tell whether it is alone.
func (f *mainFile) startWatch(every time.Duration) {
	if f.users == nil {
		return
	}
	f.watchStop, f.watchDone = make(chan struct{}), make(chan struct{})
	go f.watch(every)
}

// stopWatch stops watch and waits for it, if it runs.
func (f *mainFile) stopWatch() {
	if f.watchStop != nil {
		close(f.watchStop)
		<-f.watchDone
	}
}

// alone reports whether no other cache of the file is open (see users).
func (f *mainFile) alone() bool {
	return f.users.Alone()
}

// closeUsers lets the presence file go: the last step of Close, and of
// an Open that fails.
func (f *mainFile) closeUsers() {
	_ = f.users.Close()
}

// handle returns the main file's handle, nil when it is not open. mu must
// be held.
func (f *mainFile) handle() *bolt.DB {
	return f.db
}

// held returns the main file when it is held for writing (holding), nil
// otherwise. mu must be held.
func (f *mainFile) held() *bolt.DB {
	if !f.holding {
		return nil
	}
	return f.db
}

// close closes the main file for Close, once the journals are dealt with,
// and moves it aside if it was found broken during the run. mu must be
// held.
func (f *mainFile) close() error {
	if f.db == nil {
		if f.broken.Load() && !f.readOnly {
			f.setAside()
		}
		return nil
	}
	// A broken file is renamed while we still hold its lock (Unix allows
	// that), so that no other fastcopy starts using it in between; where
	// renaming an open file fails, after closing.
	broken := f.broken.Load() && !f.readOnly
	var aside string
	var asideErr error
	if broken {
		aside, asideErr = moveAside(f.path, time.Now())
	}
	var err error
	if cerr := f.closeMain(); cerr != nil {
		err = fmt.Errorf("hash cache %q: close: %w", f.path, cerr)
	}
	if broken && asideErr != nil {
		aside, asideErr = moveAside(f.path, time.Now())
	}
	switch {
	case broken && asideErr == nil:
		f.rep.warn(fmt.Errorf("%w: %q moved to %q", ErrCorrupt, f.path, aside))
	case broken:
		f.rep.warn(fmt.Errorf("%w: %q could not be moved aside: %v", ErrCorrupt, f.path, asideErr))
	}
	return err
}
