package hashcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultLockTimeout is how long Open waits for another process's lock when
// Options.LockTimeout is zero.
const DefaultLockTimeout = 2 * time.Second

// schemaVersion is the layout this code reads and writes: bucket "files"
// maps a path to a value encoded by encodeValue. Bump it only for changes an
// older fastcopy must not read; new fields are appended to values instead.
const schemaVersion = 1

// fillPercent packs pages to 90 % instead of bbolt's default 50 %: keys
// arrive mostly in walk order, so pages are rarely split again.
const fillPercent = 0.9

var (
	bucketMeta  = []byte("meta")
	bucketFiles = []byte("files")
	keyVersion  = []byte("version")
)

// Tuning; variables so that tests and benchmarks can change them.
var (
	batchSize          = 1000                   // entries per write transaction
	batchDelay         = 200 * time.Millisecond // longest an entry waits for its commit
	maxQueued          = 4                      // full batches waiting before Put blocks
	readAheadMin int64 = 1 << 20                // read larger files once at Open (see readAhead)

	// testBoltOptions, when set, adjusts the bbolt options (tests only).
	testBoltOptions func(*bolt.Options)
)

// Options configures Open.
type Options struct {
	// LockTimeout is how long to wait when another process has the cache
	// open; zero means DefaultLockTimeout, negative means try once.
	LockTimeout time.Duration
	// ReadOnly opens the cache for lookups only, with a shared lock: several
	// read-only opens may coexist, none with a writer. A missing or
	// unreadable file then gives an empty cache and is left as it is.
	ReadOnly bool
}

// Cache is an open hash cache. Its methods are safe for concurrent use.
type Cache struct {
	path        string
	readOnly    bool
	lockTimeout time.Duration

	// dbMu guards db, jn and others: lookups hold it for reading, the
	// writer for writing while it swaps the main file's handle for a
	// commit.
	dbMu   sync.RWMutex
	db     *bolt.DB   // the main file, read-only (shared lock) unless holding; nil when there is nothing to read
	jn     *journal   // this process's journal, while it holds entries not in the main file
	others []*journal // finished journals of other processes, read-only, newest first
	// holding: db is the main file open for writing, had alone since a
	// commit found no other user (users), and kept for the next commits
	// until one comes (see watch).
	holding bool

	// users is held shared by every open cache of this file, so that one
	// can tell it is alone (nil where that cannot be told: never alone).
	users     *fileio.Presence
	watchStop chan struct{}
	watchDone chan struct{}

	writing    bool // a writer runs: not read-only, not unused
	q          queue
	writerDone chan struct{}

	mu       sync.Mutex
	warnings []error
	err      error // first commit error, or ErrReadOnly

	broken  atomic.Bool  // a transaction failed on a bad page
	commits atomic.Int64 // write transactions, for tests
	reopens atomic.Int64 // read-only opens of the main file after a commit, for tests
	merged  atomic.Int64 // journals merged into the main file, for tests
}

// LookupResult is the answer of Lookup for one path.
type LookupResult struct {
	Entry Entry
	Found bool
}

// DefaultPath returns where fastcopy keeps its hash cache:
// os.UserCacheDir()/fastcopy/hashes.db, which honours XDG_CACHE_HOME on
// Linux.
func DefaultPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("hash cache: no user cache directory: %w", err)
	}
	return filepath.Join(dir, "fastcopy", "hashes.db"), nil
}

// Open opens the cache at path, creating it and its directories (mode 0700)
// if needed. Several processes may have one cache open at once, each for
// reading and writing (see the package documentation): Open waits only for
// a process that holds the file alone, an older fastcopy or one that is
// committing or merging, for opt.LockTimeout (but at least
// sharedLockGrace), and then fails with an error wrapping ErrLocked. It
// also fails when the file or its directory cannot be created or opened at
// all. fastcopy stops on the first (exit status 5) and runs without a
// cache after the second.
//
// A file that is not a readable cache of this fastcopy (garbage, truncated,
// not a bbolt database, a page that makes bbolt fail) is moved aside to
// path.corrupt-<unix time> and a new cache is created; the returned cache
// carries a warning wrapping ErrCorrupt. Only the most recent such copy is
// kept. A cache written by a newer fastcopy is left alone and not used, with
// a warning wrapping ErrNewerSchema. Check Warnings after Open and again
// after Close.
func Open(path string, opt Options) (*Cache, error) {
	switch {
	case opt.LockTimeout == 0:
		opt.LockTimeout = DefaultLockTimeout
	case opt.LockTimeout < 0:
		opt.LockTimeout = time.Nanosecond // bbolt tries once
	}
	if strings.Contains("/"+filepath.ToSlash(path)+"/", "/../") {
		// As the kernel resolves it: the cache's directory is made and
		// flushed by name, and filepath.Dir would cut "a/link/../c/h.db"
		// as text to a/c, not the link target's sibling c.
		r, err := fileio.Resolve(path)
		if err != nil {
			return nil, fmt.Errorf("hash cache %q: %w", path, err)
		}
		path = r
	}
	c := &Cache{path: path, readOnly: opt.ReadOnly, lockTimeout: opt.LockTimeout}
	c.q.room.L = &c.q.mu
	if !opt.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("hash cache: %w", err)
		}
	}
	// Without it (a directory that cannot be written) this cache never
	// holds the file between commits. A read-only cache takes it in open,
	// only once the cache file is there, so that it creates nothing before
	// any run.
	if !opt.ReadOnly {
		c.users, _ = fileio.OpenPresence(path + usersSuffix)
	}
	for attempt := 1; ; attempt++ {
		done, err := c.open(attempt == 1)
		if err != nil {
			c.closeOthers()
			_ = c.users.Close()
			return nil, err
		}
		if done {
			break
		}
		if attempt == 3 {
			c.closeOthers()
			_ = c.users.Close()
			return nil, fmt.Errorf("hash cache %q: still unreadable after starting afresh", path)
		}
	}
	if c.writing {
		c.q.kick = make(chan struct{}, 1)
		c.writerDone = make(chan struct{})
		go c.writer()
		if c.users != nil {
			c.watchStop, c.watchDone = make(chan struct{}), make(chan struct{})
			go c.watch(holdCheck)
		}
	}
	return c, nil
}

// usersSuffix names the presence file beside the cache file (see
// Cache.users).
const usersSuffix = ".users"

// IsOwnFile reports whether name, a file in the directory of the cache
// file at cachePath, is one the cache keeps beside it: a journal (in the
// making or not) or its presence file.
func IsOwnFile(cachePath, name string) bool {
	return IsJournal(cachePath, name) || name == filepath.Base(cachePath)+usersSuffix
}

// holdCheck is how often a cache that holds the main file between commits
// looks whether another has come (which then waits at most that long,
// plus a commit, for its shared lock).
var holdCheck = 50 * time.Millisecond

// watch lets the main file go as soon as another cache of it is open, so
// that it gets its shared lock: until then, this cache keeps the file
// open for writing from one commit to the next, instead of closing it,
// opening it alone, committing, closing it and opening it read-only again
// for each (which cost a tenth of a run of many small files). every is
// holdCheck as Open read it.
func (c *Cache) watch(every time.Duration) {
	defer close(c.watchDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.watchStop:
			return
		case <-t.C:
		}
		c.dbMu.RLock()
		holding := c.holding
		c.dbMu.RUnlock()
		if holding && !c.users.Alone() {
			c.dbMu.Lock()
			if c.holding {
				c.letGo()
			}
			c.dbMu.Unlock()
		}
	}
}

// letGo turns the main file held for writing back into the read-only
// handle every cache keeps. dbMu must be held.
func (c *Cache) letGo() {
	c.closeMain()
	c.reopenMain()
}

// sharedLockGrace is the least Open waits for the shared lock, whatever
// Options.LockTimeout says: another fastcopy takes the file alone for each
// commit, a few milliseconds every 200 ms.
var sharedLockGrace = time.Second

// open makes one attempt. done is false when the file was moved aside (or
// replaced under us) and Open should try again.
//
// A writable cache first takes the file alone, once, without waiting: if
// no other process has it open, it is created or checked, set aside when
// unreadable, and the journals other processes left are merged into it.
// Then every cache, writable or not, opens the file read-only with a
// shared lock for the rest of its life, and the finished journals that
// could not be merged (another process has the file open) read-only too.
func (c *Cache) open(first bool) (done bool, err error) {
	pre, preErr := os.Stat(c.path)
	if !c.readOnly {
		// What cannot be merged now stays where it is, and is read.
		held, state, err := c.exclusive(func(db *bolt.DB) error { _, _ = c.commitAlone(db, nil); return nil }, false)
		switch {
		case err != nil:
			return false, err
		case state == stateCorrupt:
			return false, nil // moved aside: again
		case state == stateNewer:
			return true, nil
		case held && state == stateFresh && first && preErr == nil && pre.Size() == 0:
			c.warn(fmt.Errorf("%w: %q was empty; started a new one", ErrCorrupt, c.path))
		}
	}
	if c.readOnly && errors.Is(preErr, fs.ErrNotExist) {
		return true, nil // nothing cached yet
	}
	if c.readOnly && c.users == nil {
		// Before the shared lock: a cache that holds the file alone lets
		// it go only for one it can see. Where the presence file cannot be
		// had, waiting for the shared lock is all there is.
		c.users, _ = fileio.OpenPresence(c.path + usersSuffix)
	}
	wait := max(c.lockTimeout, sharedLockGrace)
	o := openDB(c.path, Options{ReadOnly: true, LockTimeout: wait})
	switch {
	case errors.Is(o.err, berrors.ErrTimeout):
		return false, fmt.Errorf("hash cache %q: %w (waited %v)", c.path, errCacheLocked, wait)
	case errors.Is(o.openErr, fs.ErrNotExist) && c.readOnly:
		return true, nil // removed (cache clear) since the stat
	case errors.Is(o.openErr, fs.ErrNotExist):
		return false, nil // removed since it was created: again
	case o.openErr != nil:
		return false, fmt.Errorf("hash cache: %w", o.openErr)
	case o.err != nil:
		return c.unusable(o, o.err)
	}
	state, ver, cause := checkSchema(o.db, o.file)
	switch state {
	case stateFresh:
		// Empty: being created by another process that has not written
		// it yet, or left so by one that died doing it. Nothing to read;
		// a writer's first commit makes it a cache.
		o.release()
		c.writing = !c.readOnly
		c.others = c.finishedJournals()
		return true, nil
	case stateNewer:
		o.release()
		c.warnNewer(ver)
		return true, nil
	case stateCorrupt:
		return c.unusable(o, cause)
	}
	c.db = o.db
	c.writing = !c.readOnly
	c.others = c.finishedJournals()
	if fi, err := o.file.Stat(); err == nil && fi.Size() >= readAheadMin {
		readAhead(c.path)
	}
	return true, nil
}

func (c *Cache) warnNewer(ver uint64) {
	c.warn(fmt.Errorf("%w: %q has schema version %d, this fastcopy knows %d; not used for this run",
		ErrNewerSchema, c.path, ver, schemaVersion))
}

// unusable deals with a file found unreadable under the shared lock: a
// read-only cache ignores it; a writable one moves it aside when it can
// have it alone, and otherwise reads nothing from it and leaves that to the
// first commit that has it alone.
func (c *Cache) unusable(o opened, cause error) (done bool, err error) {
	if c.readOnly {
		return c.corrupt(o, cause)
	}
	o.release()
	held, state, err := c.exclusive(func(*bolt.DB) error { return nil }, false)
	switch {
	case err != nil:
		return false, err
	case held:
		return state == stateNewer, nil // moved aside or fine now: again
	}
	c.warn(fmt.Errorf("%w: %q: %v; not read for this run", ErrCorrupt, c.path, cause))
	c.writing = true
	return true, nil
}

// exclusive opens the main file alone, trying once, and runs fn on it: a
// new file is made a cache first, an unreadable one is moved aside
// (state stateCorrupt, fn not run), and one of a newer schema is left
// alone (stateNewer, with a warning, fn not run). held is false when
// another process has the file open.
//
// With keep, a file on which fn succeeded is kept open: it becomes db, and
// holding is set (dbMu must be held, and db closed).
func (c *Cache) exclusive(fn func(*bolt.DB) error, keep bool) (held bool, state int, err error) {
	o := openDB(c.path, Options{LockTimeout: time.Nanosecond})
	switch {
	case errors.Is(o.err, berrors.ErrTimeout):
		return false, stateOK, nil
	case o.openErr != nil:
		return false, stateOK, fmt.Errorf("hash cache: %w", o.openErr)
	case o.err != nil:
		_, err := c.corrupt(o, o.err)
		return true, stateCorrupt, err
	}
	state, ver, cause := checkSchema(o.db, o.file)
	switch state {
	case stateFresh:
		if err := initSchema(o.db); err != nil {
			if isPanic(err) {
				_, err := c.corrupt(o, err)
				return true, stateCorrupt, err
			}
			o.release()
			return true, state, fmt.Errorf("hash cache %q: %w", c.path, err)
		}
	case stateNewer:
		o.release()
		c.warnNewer(ver)
		return true, state, nil
	case stateCorrupt:
		_, err := c.corrupt(o, cause)
		return true, state, err
	}
	err = fn(o.db)
	if err == nil && keep {
		c.db, c.holding = o.db, true
		return true, state, nil
	}
	o.release()
	return true, state, err
}

// corrupt deals with a file that is not a usable cache: ignored when
// read-only, else moved aside so that the next attempt starts afresh.
func (c *Cache) corrupt(o opened, cause error) (done bool, err error) {
	if c.readOnly {
		o.release()
		c.warn(fmt.Errorf("%w: %q: %v; not used for this run", ErrCorrupt, c.path, cause))
		return true, nil
	}
	// bbolt drops its lock when it gives up on a file; another fastcopy may
	// have moved it aside and started a new one since. Move only what we
	// looked at.
	if o.info != nil {
		if cur, err := os.Stat(c.path); err != nil || !os.SameFile(o.info, cur) {
			o.release()
			return false, nil
		}
	}
	aside, err := moveAside(c.path, time.Now())
	o.release()
	if err != nil {
		return false, fmt.Errorf("hash cache %q is unreadable (%v) and could not be moved aside: %w", c.path, cause, err)
	}
	c.warn(fmt.Errorf("%w: %q: %v; moved to %q and started a new one", ErrCorrupt, c.path, cause, aside))
	return false, nil
}

// opened is the outcome of one bbolt.Open.
type opened struct {
	db      *bolt.DB
	file    *os.File    // the file bbolt opened (and locked), if it got that far
	info    fs.FileInfo // its identity
	openErr error       // opening the file failed: not a corruption
	err     error       // anything else, including a recovered panic
}

// release closes what o holds, giving up the lock.
func (o opened) release() {
	if o.db != nil {
		protect(func() { _ = o.db.Close() })
		return
	}
	if o.file != nil {
		_ = o.file.Close() // after bbolt failed it may be closed already
	}
}

// openDB runs bbolt.Open, turning a panic on a bad file into an error.
func openDB(path string, opt Options) (o opened) {
	bopt := &bolt.Options{
		Timeout:      opt.LockTimeout,
		ReadOnly:     opt.ReadOnly,
		NoStatistics: true,
		// Opened so that other handles may rename or remove the file while
		// bbolt holds it: a journal is renamed to its final name and
		// removed once merged while open (and so locked), an unreadable
		// cache is moved aside, and Clear removes the file of a run still
		// going on. Windows refuses all of these for a file that
		// os.OpenFile opened, since it shares no delete access
		// (fileio.OpenShared); on Unix it is os.OpenFile.
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := fileio.OpenShared(name, flag, perm)
			if err != nil {
				o.openErr = err
				return nil, err
			}
			o.file = f
			o.info, _ = f.Stat()
			return f, nil
		},
	}
	if testBoltOptions != nil {
		testBoltOptions(bopt)
	}
	var err error
	if perr := protect(func() { o.db, err = bolt.Open(path, 0o600, bopt) }); perr != nil {
		err = perr
	}
	if err != nil {
		o.db, o.err = nil, err
	}
	return o
}

// panicError is a panic of the database code, turned into an error.
type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprintf("database code failed: %v", e.v) }

func isPanic(err error) bool {
	var p panicError
	return errors.As(err, &p)
}

// protect runs fn, turning a panic into a panicError. bbolt trusts the bytes
// of its file: a bad page makes it panic, or read through a wild page
// number, which SetPanicOnFault turns from a crash into a panic.
func protect(fn func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			err = panicError{r}
		}
	}()
	fn()
	return nil
}

const (
	stateOK = iota
	stateFresh
	stateNewer
	stateCorrupt
)

// checkSchema looks at what a freshly opened database holds. It also reads
// the first and last leaf of the files bucket, so that a wrecked tree is
// found now rather than half way through a run.
func checkSchema(db *bolt.DB, f *os.File) (state int, ver uint64, cause error) {
	fi, err := f.Stat()
	if err != nil {
		return stateCorrupt, 0, err
	}
	err = protect(func() {
		cause = db.View(func(tx *bolt.Tx) error {
			if tx.Size() > fi.Size() {
				return fmt.Errorf("file is %d bytes but its pages need %d (truncated)", fi.Size(), tx.Size())
			}
			meta, files := tx.Bucket(bucketMeta), tx.Bucket(bucketFiles)
			if meta == nil {
				if k, _ := tx.Cursor().First(); k != nil {
					return errors.New("not a fastcopy hash cache")
				}
				state = stateFresh
				return nil
			}
			v := meta.Get(keyVersion)
			n := 0
			ver, n = binary.Uvarint(v)
			switch {
			case n <= 0 || n != len(v) || ver == 0:
				return fmt.Errorf("bad schema version %x", v)
			case ver > schemaVersion:
				state = stateNewer
				return nil
			case files == nil:
				return errors.New("no files bucket")
			}
			cur := files.Cursor()
			cur.First()
			cur.Last()
			return nil
		})
	})
	if err != nil {
		cause = err
	}
	if cause != nil {
		return stateCorrupt, 0, cause
	}
	return state, ver, nil
}

func initSchema(db *bolt.DB) error {
	var err error
	if perr := protect(func() {
		err = db.Update(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if err := meta.Put(keyVersion, binary.AppendUvarint(nil, schemaVersion)); err != nil {
				return err
			}
			_, err = tx.CreateBucketIfNotExists(bucketFiles)
			return err
		})
	}); perr != nil {
		return perr
	}
	return err
}

// moveAside renames a bad cache to path.corrupt-<unix time> and removes
// older such copies: one is enough to look at, and a disk that keeps
// corrupting the cache should not fill up with them.
func moveAside(path string, now time.Time) (string, error) {
	aside := fmt.Sprintf("%s.corrupt-%d", path, now.Unix())
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	removeCorrupt(path, aside)
	return aside, nil
}

// removeCorrupt removes the path.corrupt-* files except keep.
func removeCorrupt(path, keep string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), base+".corrupt-") && p != keep {
			_ = os.Remove(p)
		}
	}
}

// readAhead reads the file once, sequentially, before the first lookup.
// bbolt maps its file with MADV_RANDOM, so the first pass over a cold cache
// would fault its pages in one by one. A plain read in the foreground was
// measured against none, posix_fadvise(WILLNEED) and a read in the
// background, and beat them all; docs/benchmarks.md ("Hash cache: one read
// of the file at Open") gives the numbers; BenchmarkColdOpenLookup and
// BenchmarkOpenWarm measure the read against none again.
func readAhead(path string) {
	f, err := fileio.OpenShared(path, os.O_RDONLY, 0) // renamed meanwhile: see openDB
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Read(buf); err != nil {
			return
		}
	}
}

// Path returns the path of the cache file.
func (c *Cache) Path() string { return c.path }

// Warnings returns the problems the cache met and worked around, each
// wrapping ErrCorrupt or ErrNewerSchema. Open records them; a bad page found
// during the run adds one (the cache then stops reading and writing and is
// moved aside by Close).
func (c *Cache) Warnings() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.warnings...)
}

func (c *Cache) warn(err error) {
	c.mu.Lock()
	c.warnings = append(c.warnings, err)
	c.mu.Unlock()
}

func (c *Cache) setErr(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *Cache) firstErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// markBroken stops all use of a database that failed on a bad page.
func (c *Cache) markBroken(cause error) {
	if c.broken.CompareAndSwap(false, true) {
		what := "it will be moved aside when closed"
		if c.readOnly {
			what = "not used for the rest of the run"
		}
		c.warn(fmt.Errorf("%w: %q: %v; %s", ErrCorrupt, c.path, cause, what))
	}
}

func (c *Cache) readable() bool {
	return !c.broken.Load()
}

var errNoBucket = errors.New("files bucket missing")

// view runs fn in read transactions of the main file and of the journals
// this process reads (its own and the finished ones of others): get
// answers from the journals first, newest first, then from the main file.
// main is the main file's files bucket, nil when there is none to read.
func (c *Cache) view(fn func(get func(key []byte) []byte, main *bolt.Bucket)) {
	if !c.readable() {
		return
	}
	c.dbMu.RLock()
	defer c.dbMu.RUnlock()
	var txs []*bolt.Tx
	var err error
	if perr := protect(func() {
		defer func() {
			for _, tx := range txs {
				_ = tx.Rollback()
			}
		}()
		var main *bolt.Bucket
		if c.db != nil {
			tx, e := c.db.Begin(false)
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
		for _, j := range c.journals() {
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
		c.markBroken(perr)
	} else if errors.Is(err, errNoBucket) {
		c.markBroken(err)
	}
}

// journals returns the journals to read, newest first: this process's own,
// then the others'. dbMu must be held.
func (c *Cache) journals() []*journal {
	if c.jn == nil {
		return c.others
	}
	return append([]*journal{c.jn}, c.others...)
}

// validKey reports whether path can be a bbolt key. Paths the kernel
// accepts (at most PATH_MAX, 4096 bytes) always can.
func validKey(path string) bool {
	return len(path) > 0 && len(path) <= bolt.MaxKeySize
}

// Get returns the entry stored for path (an absolute path, as the engine
// spells it; the bytes need not be UTF-8). It sees only committed entries:
// call Flush first to read what was just Put. It reports false for a missing,
// undecodable or unusable entry.
func (c *Cache) Get(path string) (Entry, bool) {
	var e Entry
	var ok bool
	if !validKey(path) {
		return e, false
	}
	c.view(func(get func([]byte) []byte, _ *bolt.Bucket) {
		e, ok = decodeValue(path, get([]byte(path)))
	})
	return e, ok
}

// Lookup looks up many paths in one read transaction (the engine passes a
// directory's files at a time), returning one result per path, in order.
func (c *Cache) Lookup(paths []string) []LookupResult {
	res := make([]LookupResult, len(paths))
	c.view(func(get func([]byte) []byte, _ *bolt.Bucket) {
		var key []byte
		for i, p := range paths {
			if !validKey(p) {
				continue
			}
			key = append(key[:0], p...)
			res[i].Entry, res[i].Found = decodeValue(p, get(key))
		}
	})
	return res
}
