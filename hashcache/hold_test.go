package hashcache

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestHoldWhileAlone: a cache no other cache of the file is open beside
// keeps the main file open for writing from one commit to the next,
// instead of letting it go and opening it read-only again after each (the
// cost of a tenth of a run of many small files); what it commits is
// stored and read back.
func TestHoldWhileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	c := openT(t, path, Options{})
	for i := range 5 {
		for j := range 10 {
			c.Put(fmt.Sprintf("/f%d-%d", i, j), entryFor(i*10+j+1))
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.writer.commits.Load(); got < 5 {
		t.Fatalf("%d commits, want at least 5", got)
	}
	if got := c.main.reopens.Load(); got != 0 {
		t.Errorf("the main file was opened read-only again %d times after %d commits, want none while alone", got, c.writer.commits.Load())
	}
	if e, ok := c.Get("/f4-9"); !ok || e != entryFor(50) {
		t.Errorf("Get after the commits = %v, %v", e, ok)
	}
	closeT(t, c)
	c = openT(t, path, Options{ReadOnly: true})
	defer closeT(t, c)
	if e, ok := c.Get("/f0-0"); !ok || e != entryFor(1) {
		t.Errorf("Get after reopening = %v, %v", e, ok)
	}
}

// TestHoldLetsGo: a cache that holds the main file lets it go as soon as
// another cache of it opens, which gets in well within its shared-lock
// wait; both then store what they learn.
func TestHoldLetsGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	a := openT(t, path, Options{})
	a.Put("/a", entryFor(1))
	flushT(t, a)
	holding := holds(a)
	if !holding {
		t.Fatal("alone after a commit, yet not holding the file")
	}
	start := time.Now()
	b, err := Open(path, Options{LockTimeout: -1}) // the least wait: sharedLockGrace
	if err != nil {
		t.Fatalf("a second cache could not open beside one that held the file: %v (after %v)", err, time.Since(start))
	}
	b.Put("/b", entryFor(2))
	a.Put("/a2", entryFor(3))
	closeT(t, b)
	closeT(t, a)
	c := openT(t, path, Options{ReadOnly: true})
	defer closeT(t, c)
	for p, want := range map[string]Entry{"/a": entryFor(1), "/b": entryFor(2), "/a2": entryFor(3)} {
		if e, ok := c.Get(p); !ok || e != want {
			t.Errorf("%s = %v, %v after both closed", p, e, ok)
		}
	}
}

// TestHoldClear: a cache that holds the main file when the cache is
// cleared (cache clear during a run) lets it go, and what it records from
// then on goes to the new cache file at the path, as Clear promises,
// instead of to the removed file it held.
func TestHoldClear(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	a := openT(t, path, Options{})
	a.Put("/a", entryFor(1))
	flushT(t, a)
	if err := Clear(path); err != nil {
		t.Fatal(err)
	}
	a.Put("/after", entryFor(2))
	flushT(t, a)
	closeT(t, a)
	c := openT(t, path, Options{ReadOnly: true})
	defer closeT(t, c)
	if e, ok := c.Get("/after"); !ok || e != entryFor(2) {
		t.Errorf("an entry recorded after Clear = %v, %v; want it in the new cache file", e, ok)
	}
}

// TestHoldLetsReaderIn: a read-only cache (fastcopy verify, cache stats)
// opened beside one that holds the main file is seen, and gets its shared
// lock within its wait.
func TestHoldLetsReaderIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	a := openT(t, path, Options{})
	defer closeT(t, a)
	a.Put("/a", entryFor(1))
	flushT(t, a)
	r, err := Open(path, Options{ReadOnly: true, LockTimeout: -1})
	if err != nil {
		t.Fatalf("a read-only cache could not open beside one that held the file: %v", err)
	}
	defer closeT(t, r)
	if e, ok := r.Get("/a"); !ok || e != entryFor(1) {
		t.Errorf("read-only Get beside a holder = %v, %v", e, ok)
	}
}

// TestHoldClearSeen: a cache open across a Clear is seen by the caches
// opened after it, so that one of those that holds the new cache file
// lets it go for it: its commits then open the new file again for its
// lookups, instead of waiting for it in vain and reading only its
// journal.
func TestHoldClearSeen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	// a's own watch must not find the new presence file before b's
	// commit (it would, 50 ms after the Clear, on a slow machine or under
	// Wine): b would then not be alone, and commit to its journal. a
	// takes the new file at its commit instead, and b's watch lets go.
	saved := holdCheck
	holdCheck = time.Hour
	a := openT(t, path, Options{})
	holdCheck = saved
	defer closeT(t, a)
	a.Put("/a", entryFor(1))
	flushT(t, a)
	if err := Clear(path); err != nil {
		t.Fatal(err)
	}
	b := openT(t, path, Options{})
	defer closeT(t, b)
	b.Put("/b", entryFor(2))
	flushT(t, b)
	a.Put("/a2", entryFor(3))
	flushT(t, a)
	if e, ok := a.Get("/b"); !ok || e != entryFor(2) {
		t.Errorf("an entry the cache opened after the Clear committed = %v, %v to the one open across it", e, ok)
	}
}

// TestHoldSetNote: a note stored while the cache holds the main file is
// written on the handle held, which the cache keeps; the note reads back.
func TestHoldSetNote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	c := openT(t, path, Options{})
	defer closeT(t, c)
	c.Put("/a", entryFor(1))
	flushT(t, c)
	if err := c.SetNote("k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Note("k"); !ok || v != "v" {
		t.Errorf("Note = %q, %v", v, ok)
	}
	holding := holds(c)
	if !holding || c.main.reopens.Load() != 0 {
		t.Errorf("after SetNote: holding %v, %d read-only opens; want the file still held", holding, c.main.reopens.Load())
	}
}

// holds reports whether c keeps the main file open for writing between
// commits.
func holds(c *Cache) bool {
	c.main.mu.RLock()
	defer c.main.mu.RUnlock()
	return c.main.holding
}
