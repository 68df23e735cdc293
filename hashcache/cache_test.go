package hashcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
	bolt "go.etcd.io/bbolt"
)

// walkPaths returns n paths of about 60 bytes in the order a walk meets
// them: 100 files per directory.
func walkPaths(n int) []string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf("/home/alice/projects/photos-2024/album-%04d/IMG_%06d.jpg", i/100, i)
	}
	return p
}

// entryFor returns a distinct, non-racy entry for the i-th file.
func entryFor(i int) Entry {
	m := 1704067200*sec + int64(i)*7919
	return Entry{
		Size:     int64(i) * 1000,
		Mtime:    m,
		Ctime:    m,
		Ino:      uint64(1000000 + i),
		Sum:      xxh3.Hash128([]byte(fmt.Sprint(i))),
		HashedAt: m + 86400*sec,
	}
}

func openT(t testing.TB, path string, opt Options) *Cache {
	t.Helper()
	c, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

func closeT(t testing.TB, c *Cache) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// updateT writes to the main file of c directly, as a commit does.
func updateT(c *Cache, fn func(b *bolt.Bucket) error) error {
	c.main.mu.Lock()
	defer c.main.mu.Unlock()
	c.main.closeMain()
	defer c.main.reopenMain()
	held, _, err := c.main.exclusive(func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucketFiles)) })
	}, false)
	if err == nil && !held {
		err = errors.New("another process has the cache open")
	}
	return err
}

func flushT(t testing.TB, c *Cache) {
	t.Helper()
	if err := c.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "hashes.db")
	c := openT(t, path, Options{})
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings on a new cache: %v", w)
	}
	if _, ok := c.Get("/x"); ok {
		t.Error("Get on an empty cache found something")
	}
	keys := []string{"/a/file", "/a/\xff\xfe-not-utf8", "/a/with\nnewline", "/a/ü"}
	for i, k := range keys {
		c.Put(k, entryFor(i))
	}
	flushT(t, c)
	for i, k := range keys {
		if got, ok := c.Get(k); !ok || got != entryFor(i) {
			t.Errorf("Get(%q) = %+v, %v; want %+v", k, got, ok, entryFor(i))
		}
	}
	closeT(t, c)

	for _, p := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")} {
		if fi, err := os.Stat(p); err != nil || (windowsModes(t) && fi.Mode().Perm() != 0o700) {
			t.Errorf("%s: %v, %v; want a directory with mode 0700", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(path); err != nil || (windowsModes(t) && fi.Mode().Perm() != 0o600) {
		t.Errorf("cache file mode %v, %v; want 0600", fi.Mode(), err)
	}

	c = openT(t, path, Options{})
	res := c.Lookup(append([]string{"/missing", ""}, keys...))
	if res[0].Found || res[1].Found {
		t.Errorf("Lookup found a missing or empty path: %+v", res[:2])
	}
	for i, k := range keys {
		if r := res[i+2]; !r.Found || r.Entry != entryFor(i) {
			t.Errorf("Lookup %q = %+v", k, r)
		}
	}
	c.Delete(keys[0])
	flushT(t, c)
	if _, ok := c.Get(keys[0]); ok {
		t.Error("Get found a deleted entry")
	}
	closeT(t, c)
	if err := c.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if err := c.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
}

func TestPutDeleteOrder(t *testing.T) {
	t.Parallel()
	c := openT(t, filepath.Join(t.TempDir(), "hashes.db"), Options{})
	defer closeT(t, c)
	c.Put("/b", entryFor(1))
	c.Delete("/b")
	c.Put("/a", entryFor(1))
	c.Delete("/a")
	c.Put("/a", entryFor(2))
	c.Put("/c", entryFor(3))
	c.Put("/c", entryFor(4))
	flushT(t, c)
	if _, ok := c.Get("/b"); ok {
		t.Error("/b: put then delete left an entry")
	}
	if e, ok := c.Get("/a"); !ok || e != entryFor(2) {
		t.Errorf("/a = %+v, %v; want the last put", e, ok)
	}
	if e, ok := c.Get("/c"); !ok || e != entryFor(4) {
		t.Errorf("/c = %+v, %v; want the last put", e, ok)
	}
}

func TestInvalidKeys(t *testing.T) {
	t.Parallel()
	c := openT(t, filepath.Join(t.TempDir(), "hashes.db"), Options{})
	defer closeT(t, c)
	long := "/" + string(make([]byte, bolt.MaxKeySize))
	c.Put("", entryFor(1))
	c.Put(long, entryFor(1))
	c.Delete("")
	c.Put("/ok", entryFor(1))
	flushT(t, c) // an invalid key must not fail the batch
	if _, ok := c.Get(""); ok {
		t.Error("Get(\"\") found something")
	}
	if _, ok := c.Get(long); ok {
		t.Error("Get(too long) found something")
	}
	if _, ok := c.Get("/ok"); !ok {
		t.Error("the valid key of the batch was lost")
	}
}

func TestWriterBatching(t *testing.T) {
	// Only the size trigger: a loaded machine must not let the timer cut
	// batches short.
	defer func(d time.Duration) { batchDelay = d }(batchDelay)
	batchDelay = time.Minute
	c := openT(t, filepath.Join(t.TempDir(), "hashes.db"), Options{})
	defer closeT(t, c)
	const n = 10_000
	paths := walkPaths(n)
	for i, p := range paths {
		c.Put(p, entryFor(i))
	}
	flushT(t, c)
	// One commit per full batch at most; batches that waited for the
	// writer together are committed together (TestWriterMergesWaiting).
	commits := c.writer.commits.Load()
	if max := int64(n / batchSize); commits < 1 || commits > max {
		t.Errorf("%d commits for %d puts, want 1 to %d", commits, n, max)
	}
	t.Logf("%d puts in %d commits", n, commits)
	res := c.Lookup(paths)
	for i, r := range res {
		if !r.Found || r.Entry != entryFor(i) {
			t.Fatalf("entry %d (%s) after Flush: %+v", i, paths[i], r)
		}
	}
}

// Full batches that wait for the writer while it commits are committed in
// one transaction, not one each: a run that stores its sources' entries at
// the end pays one synced commit for them.
func TestWriterMergesWaiting(t *testing.T) {
	defer func(d time.Duration) { batchDelay = d }(batchDelay)
	batchDelay = time.Minute
	c := openT(t, filepath.Join(t.TempDir(), "hashes.db"), Options{})
	defer closeT(t, c)
	paths := walkPaths(4 * batchSize)
	c.main.mu.Lock() // the writer's first commit waits here
	for i, p := range paths[:batchSize] {
		c.Put(p, entryFor(i))
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		c.writer.q.mu.Lock()
		taken := len(c.writer.q.full) == 0
		c.writer.q.mu.Unlock()
		if taken {
			break
		}
		if time.Now().After(deadline) {
			c.main.mu.Unlock()
			t.Fatal("the writer did not take the first batch within 5s")
		}
	}
	for i, p := range paths[batchSize:] { // three batches wait meanwhile
		c.Put(p, entryFor(batchSize+i))
	}
	c.main.mu.Unlock()
	flushT(t, c)
	if n := c.writer.commits.Load(); n != 2 {
		t.Errorf("%d commits for one batch and three that waited together, want 2", n)
	}
	for i, r := range c.Lookup(paths) {
		if !r.Found || r.Entry != entryFor(i) {
			t.Fatalf("entry %d (%s) after Flush: %+v", i, paths[i], r)
		}
	}
}

// A few entries are committed by the timer without a Flush.
func TestWriterTimer(t *testing.T) {
	t.Parallel()
	c := openT(t, filepath.Join(t.TempDir(), "hashes.db"), Options{})
	defer closeT(t, c)
	start := time.Now() // before the Puts: a busy machine may stall them
	for i := range 5 {
		c.Put(fmt.Sprintf("/t/%d", i), entryFor(i))
	}
	for {
		if _, ok := c.Get("/t/4"); ok {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("entries not committed 5s after Put")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(start); d < batchDelay/2 {
		t.Errorf("committed after %v, before the batch delay %v", d, batchDelay)
	}
	// The entries are visible once the transaction ends, a moment before
	// the writer counts it: Flush waits for the writer.
	flushT(t, c)
	// One commit, unless the machine stalled this goroutine between Puts
	// for longer than the delay: never one per entry.
	if n := c.writer.commits.Load(); n < 1 || n > 2 {
		t.Errorf("%d commits for 5 entries, want 1 (2 at most on a stalled machine)", n)
	}
}

// With a tiny queue Put blocks instead of dropping.
func TestWriterBackpressure(t *testing.T) {
	defer func(n, m int) { batchSize, maxQueued = n, m }(batchSize, maxQueued)
	batchSize, maxQueued = 10, 1
	defer func() { testBoltOptions = nil }()
	testBoltOptions = func(o *bolt.Options) { o.NoSync = true }       // 300 commits
	c := openT(t, filepath.Join(t.TempDir(), "hashes.db"), Options{}) // every open of the file, as each commit opens it
	defer closeT(t, c)
	paths := walkPaths(3000)
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := w; i < len(paths); i += 4 {
				c.Put(paths[i], entryFor(i))
			}
		}()
	}
	for range 4 {
		<-done
	}
	flushT(t, c)
	for i, r := range c.Lookup(paths) {
		if !r.Found || r.Entry != entryFor(i) {
			t.Fatalf("entry %d lost", i)
		}
	}
}

// A failed commit is remembered and reported by Flush and Close; the entries
// that follow are not written.
func TestCommitError(t *testing.T) {
	defer func() { testBoltOptions = nil }()
	testBoltOptions = func(o *bolt.Options) { o.MaxSize = 64 << 10 }
	c := openT(t, filepath.Join(t.TempDir(), "hashes.db"), Options{}) // every open of the file, as each commit opens it
	paths := walkPaths(5000)
	for i, p := range paths {
		c.Put(p, entryFor(i))
	}
	err := c.Flush()
	if err == nil {
		t.Fatal("Flush after outgrowing MaxSize = nil, want an error")
	}
	t.Logf("Flush: %v", err)
	c.Put("/after", entryFor(1))
	if err2 := c.Flush(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Flush = %v, want the first error again", err2)
	}
	if err := c.Close(); err == nil {
		t.Error("Close = nil, want the commit error")
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "hashes.db")

	// Missing file: an empty cache, nothing created.
	c := openT(t, path, Options{ReadOnly: true})
	if _, ok := c.Get("/a"); ok {
		t.Error("Get on a missing read-only cache found something")
	}
	if len(c.Warnings()) != 0 {
		t.Errorf("warnings for a missing read-only cache: %v", c.Warnings())
	}
	c.Put("/a", entryFor(1))
	if err := c.Flush(); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Flush after Put on read-only = %v, want ErrReadOnly", err)
	}
	if err := c.Close(); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Close after Put on read-only = %v, want ErrReadOnly", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("read-only Open created the file: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("read-only Open created %q", ents[0].Name())
	}

	w := openT(t, path, Options{})
	w.Put("/a", entryFor(1))
	closeT(t, w)

	// Two read-only opens share the lock.
	r1 := openT(t, path, Options{ReadOnly: true})
	r2 := openT(t, path, Options{ReadOnly: true, LockTimeout: -1})
	for _, r := range []*Cache{r1, r2} {
		if e, ok := r.Get("/a"); !ok || e != entryFor(1) {
			t.Errorf("read-only Get = %+v, %v", e, ok)
		}
	}
	if _, err := r1.Prune(func(string) bool { return false }); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Prune on read-only = %v, want ErrReadOnly", err)
	}
	closeT(t, r1)
	closeT(t, r2)
}

func TestDefaultPath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG_CACHE_HOME is a Linux convention")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	p, err := DefaultPath()
	if err != nil || p != filepath.Join(dir, "fastcopy", "hashes.db") {
		t.Errorf("DefaultPath = %q, %v", p, err)
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := openT(t, filepath.Join(dir, "cache", "hashes.db"), Options{})
	defer closeT(t, c)

	// Real files, half of them deleted, checked with Lstat as the CLI does.
	var keep []string
	for i := range 20 {
		p := filepath.Join(dir, fmt.Sprintf("f%02d", i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		c.Put(p, entryFor(i))
		if i%2 == 0 {
			os.Remove(p)
		} else {
			keep = append(keep, p)
		}
	}
	flushT(t, c)
	lstat := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	n, err := c.Prune(lstat)
	if err != nil || n != 10 {
		t.Fatalf("Prune = %d, %v; want 10", n, err)
	}
	for _, r := range c.Lookup(keep) {
		if !r.Found {
			t.Error("Prune removed an existing file's entry")
		}
	}

	// Several chunks, and a value that does not decode.
	paths := walkPaths(3*pruneChunk + 7)
	for i, p := range paths {
		c.Put(p, entryFor(i))
	}
	flushT(t, c)
	if err := updateT(c, func(b *bolt.Bucket) error { return b.Put([]byte("/junk"), []byte("junk")) }); err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool {
		var i int
		if _, err := fmt.Sscanf(filepath.Base(p), "IMG_%06d.jpg", &i); err == nil {
			return i%3 != 0
		}
		return lstat(p)
	}
	n, err = c.Prune(exists)
	want := (len(paths)+2)/3 + 1
	if err != nil || n != want {
		t.Fatalf("Prune = %d, %v; want %d", n, err, want)
	}
	for i, r := range c.Lookup(paths) {
		if r.Found != (i%3 != 0) {
			t.Fatalf("entry %d: found %v after Prune", i, r.Found)
		}
	}
	if s, _ := c.Stats(); s.Entries != len(keep)+len(paths)-want+1 {
		t.Errorf("%d entries after Prune, want %d", s.Entries, len(keep)+len(paths)-want+1)
	}
}

func TestStats100k(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("100k entries")
	}
	path := filepath.Join(t.TempDir(), "hashes.db")
	c := openT(t, path, Options{})
	paths := walkPaths(100_000)
	start := time.Now()
	for i, p := range paths {
		c.Put(p, entryFor(i))
	}
	closeT(t, c)
	put := time.Since(start)
	c = openT(t, path, Options{})
	defer closeT(t, c)
	s, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != len(paths) || s.Path != path {
		t.Errorf("Stats = %+v, want %d entries", s, len(paths))
	}
	t.Logf("100k entries (keys %d bytes, values %d bytes): file %d bytes, %.1f bytes per entry; %.1f bytes per entry used; Put+Close %v",
		len(paths[0]), len(encodeValue(nil, paths[0], entryFor(0))), s.FileBytes, s.BytesPerEntry,
		float64(s.UsedBytes)/float64(s.Entries), put)
}

func TestClear(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "hashes.db")
	if err := Clear(path); err != nil {
		t.Errorf("Clear of a missing cache = %v", err)
	}
	c := openT(t, path, Options{})
	c.Put("/a", entryFor(1))
	closeT(t, c)
	if err := os.WriteFile(path+".corrupt-1", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Clear(path); err != nil {
		t.Fatalf("Clear = %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("left after Clear: %v", ents)
	}
}
