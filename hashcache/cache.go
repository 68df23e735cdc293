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
	"time"

	bolt "go.etcd.io/bbolt"
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
// Its parts are components of their own: the main file's handle and its
// lifecycle (mainFile), the journals read with it (journals, under the
// main file's lock), the writer goroutine and its queue (writer), and
// what the cache met on the way (report).
type Cache struct {
	path     string
	readOnly bool

	main     mainFile
	journals journals
	writer   writer
	report   report
}

// report gathers what a cache met: the warnings (problems worked around)
// and the first commit error. Its lock is its own.
type report struct {
	mu       sync.Mutex
	warnings []error
	err      error // first commit error, or ErrReadOnly
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
	c := &Cache{path: path, readOnly: opt.ReadOnly}
	c.journals = journals{path: path}
	c.main = mainFile{path: path, readOnly: opt.ReadOnly, lockTimeout: opt.LockTimeout, rep: &c.report, js: &c.journals}
	c.writer = writer{path: path, readOnly: opt.ReadOnly, rep: &c.report, main: &c.main, js: &c.journals}
	c.writer.q.room.L = &c.writer.q.mu
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
		c.main.users, _ = fileio.OpenPresence(path + usersSuffix)
	}
	for attempt := 1; ; attempt++ {
		done, err := c.main.open(attempt == 1)
		if err != nil {
			c.journals.closeOthers()
			c.main.closeUsers()
			return nil, err
		}
		if done {
			break
		}
		if attempt == 3 {
			c.journals.closeOthers()
			c.main.closeUsers()
			return nil, fmt.Errorf("hash cache %q: still unreadable after starting afresh", path)
		}
	}
	if c.main.writable {
		c.writer.start()
		c.main.startWatch(holdCheck)
	}
	return c, nil
}

// usersSuffix names the presence file beside the cache file (see
// mainFile.users).
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

// sharedLockGrace is the least Open waits for the shared lock, whatever
// Options.LockTimeout says: another fastcopy takes the file alone for each
// commit, a few milliseconds every 200 ms.
var sharedLockGrace = time.Second

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
// background, and beat them all; "Hash cache: one read of the file at
// Open" in the history of docs/benchmarks.md (`git show
// 90fc376:docs/benchmarks.md`) gives the numbers; BenchmarkColdOpenLookup
// and BenchmarkOpenWarm measure the read against none again.
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
	return c.report.list()
}

func (r *report) list() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.warnings...)
}

func (r *report) warn(err error) {
	r.mu.Lock()
	r.warnings = append(r.warnings, err)
	r.mu.Unlock()
}

func (r *report) setErr(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *report) firstErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

var errNoBucket = errors.New("files bucket missing")

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
	c.main.view(func(get func([]byte) []byte, _ *bolt.Bucket) {
		e, ok = decodeValue(path, get([]byte(path)))
	})
	return e, ok
}

// Lookup looks up many paths in one read transaction (the engine passes a
// directory's files at a time), returning one result per path, in order.
func (c *Cache) Lookup(paths []string) []LookupResult {
	res := make([]LookupResult, len(paths))
	c.main.view(func(get func([]byte) []byte, _ *bolt.Bucket) {
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
