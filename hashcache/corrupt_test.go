package hashcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// makeCache writes n walk-order entries to a new cache at path.
func makeCache(t *testing.T, path string, n int) []string {
	t.Helper()
	c := openT(t, path, Options{})
	paths := walkPaths(n)
	for i, p := range paths {
		c.Put(p, entryFor(i))
	}
	closeT(t, c)
	return paths
}

// requireRebuilt checks that c started afresh after finding path unusable,
// warned about it, kept `aside` copies, and works.
func requireRebuilt(t *testing.T, c *Cache, path string, aside int) {
	t.Helper()
	w := c.Warnings()
	if len(w) != 1 || !errors.Is(w[0], ErrCorrupt) {
		t.Fatalf("warnings = %v, want one wrapping ErrCorrupt", w)
	}
	t.Logf("warning: %v", w[0])
	m, _ := filepath.Glob(path + ".corrupt-*")
	if len(m) != aside {
		t.Errorf("moved-aside copies %v, want %d", m, aside)
	}
	if _, ok := c.Get(walkPaths(1)[0]); ok {
		t.Error("rebuilt cache has an old entry")
	}
	c.Put("/new", entryFor(7))
	flushT(t, c)
	if e, ok := c.Get("/new"); !ok || e != entryFor(7) {
		t.Errorf("rebuilt cache: Get = %+v, %v", e, ok)
	}
}

func TestCorruptFiles(t *testing.T) {
	t.Parallel()
	garbage := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(r.Uint32())
	}
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		aside int // 0: reinitialised in place
	}{
		{"garbage", func(t *testing.T, path string) { writeFile(t, path, garbage) }, 1},
		{"short garbage", func(t *testing.T, path string) { writeFile(t, path, []byte("hello")) }, 1},
		{"zero length", func(t *testing.T, path string) { writeFile(t, path, nil) }, 0},
		{"truncated to half", func(t *testing.T, path string) {
			makeCache(t, path, 5000)
			fi, _ := os.Stat(path)
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"truncated to 3 pages", func(t *testing.T, path string) {
			makeCache(t, path, 5000)
			if err := os.Truncate(path, 3*4096); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"wrong magic", func(t *testing.T, path string) {
			makeCache(t, path, 100)
			patchFile(t, path, func(b []byte) {
				ps := pageSize(b)
				copy(b[16:], "XXXX")    // meta page 0
				copy(b[ps+16:], "XXXX") // meta page 1
			})
		}, 1},
		{"all pages but the metas are garbage", func(t *testing.T, path string) {
			// The meta pages still check out; the freelist page read during
			// Open is garbage: bbolt panics.
			makeCache(t, path, 5000)
			patchFile(t, path, func(b []byte) {
				ps := pageSize(b)
				copy(b[2*ps:], bytes.Repeat(garbage, len(b)/len(garbage)+1))
			})
		}, 1},
		{"not a fastcopy cache", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
			db.Close()
		}, 1},
		{"bad schema version", func(t *testing.T, path string) {
			makeCache(t, path, 10)
			setVersion(t, path, []byte("v1"))
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(windowsCorruptDir(t), "hashes.db")
			tt.make(t, path)
			requireIgnored(t, path)
			c := openT(t, path, Options{})
			defer closeT(t, c)
			requireRebuilt(t, c, path, tt.aside)
		})
	}
}

// requireIgnored checks that a read-only open ignores the corrupt file at
// path and leaves it alone.
func requireIgnored(t *testing.T, path string) {
	t.Helper()
	before, _ := os.ReadFile(path)
	ro := openT(t, path, Options{ReadOnly: true})
	if w := ro.Warnings(); len(w) != 1 || !errors.Is(w[0], ErrCorrupt) {
		t.Errorf("read-only warnings = %v, want one wrapping ErrCorrupt", w)
	}
	if _, ok := ro.Get(walkPaths(1)[0]); ok {
		t.Error("read-only Get trusted a corrupt file")
	}
	closeT(t, ro)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("read-only Open changed the file")
	}
}

// Only one moved-aside copy is kept.
func TestCorruptKeepsOneCopy(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hashes.db")
	writeFile(t, path+".corrupt-1", []byte("old"))
	writeFile(t, path, []byte("garbage"))
	c := openT(t, path, Options{})
	defer closeT(t, c)
	requireRebuilt(t, c, path, 1)
}

// A bad page deep in the tree, not touched by Open, is found by a lookup:
// the cache reports misses from then on, warns, and Close moves it aside.
func TestCorruptPageAtRuntime(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hashes.db")
	paths := makeCache(t, path, 5000)
	victim := paths[2500]
	var hit int
	patchFile(t, path, func(b []byte) {
		ps := pageSize(b)
		for off := 2 * ps; off+ps <= len(b); off += ps {
			pg := b[off : off+ps]
			if binary.LittleEndian.Uint64(pg) == uint64(off/ps) && pg[8] == 0x02 && bytes.Contains(pg, []byte(victim)) {
				binary.LittleEndian.PutUint64(pg, 0xdeadbeef) // the page id no longer matches
				hit++
			}
		}
	})
	if hit == 0 {
		t.Fatal("no leaf page holds the victim key")
	}
	c := openT(t, path, Options{})
	if w := c.Warnings(); len(w) != 0 {
		t.Fatalf("Open found the deep page already: %v", w)
	}
	if _, ok := c.Get(paths[0]); !ok {
		t.Error("first entry unreadable")
	}
	if _, ok := c.Get(victim); ok {
		t.Error("Get on a bad page found an entry")
	}
	if w := c.Warnings(); len(w) != 1 || !errors.Is(w[0], ErrCorrupt) {
		t.Fatalf("warnings = %v, want one wrapping ErrCorrupt", w)
	}
	if _, ok := c.Get(paths[0]); ok {
		t.Error("a broken cache still answers")
	}
	c.Put("/x", entryFor(1))
	if err := c.Flush(); err != nil {
		t.Errorf("Flush on a broken cache = %v, want nil (the warning says it)", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 1 {
		t.Errorf("moved-aside copies %v, want 1", m)
	}
	c = openT(t, path, Options{})
	defer closeT(t, c)
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings after the move: %v", w)
	}
}

// A flipped byte in a stored value makes a miss, not a wrong entry.
func TestCorruptValue(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hashes.db")
	paths := makeCache(t, path, 1000)
	victim := paths[500]
	patchFile(t, path, func(b []byte) {
		for off := 0; ; {
			i := bytes.Index(b[off:], []byte(victim))
			if i < 0 {
				break
			}
			off += i + len(victim)
			b[off+20] ^= 0x01 // inside the digest
		}
	})
	c := openT(t, path, Options{})
	defer closeT(t, c)
	if _, ok := c.Get(victim); ok {
		t.Error("a damaged value was trusted")
	}
	if _, ok := c.Get(paths[501]); !ok {
		t.Error("its neighbour was lost")
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
}

// A cache of a newer schema is left alone and unused.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hashes.db")
	paths := makeCache(t, path, 10)
	setVersion(t, path, binary.AppendUvarint(nil, schemaVersion+1))
	before, _ := os.ReadFile(path)
	for _, ro := range []bool{false, true} {
		c := openT(t, path, Options{ReadOnly: ro})
		if w := c.Warnings(); len(w) != 1 || !errors.Is(w[0], ErrNewerSchema) {
			t.Errorf("warnings = %v, want one wrapping ErrNewerSchema", w)
		}
		if _, ok := c.Get(paths[0]); ok {
			t.Error("Get read a newer schema")
		}
		c.Put("/x", entryFor(1))
		if err := c.Flush(); err != nil && !ro {
			t.Errorf("Flush = %v", err)
		}
		c.Close()
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the newer cache was changed")
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Errorf("the newer cache was moved aside: %v", m)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func patchFile(t *testing.T, path string, fn func(b []byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fn(b)
	writeFile(t, path, b)
}

// pageSize reads the page size from meta page 0 (page header 16 bytes, then
// magic, version, page size).
func pageSize(b []byte) int { return int(binary.LittleEndian.Uint32(b[16+8:])) }

func setVersion(t *testing.T, path string, v []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyVersion, v)
	}); err != nil {
		t.Fatal(err)
	}
}
