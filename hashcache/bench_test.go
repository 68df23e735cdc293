package hashcache

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkPut stores 100k entries with 58-byte paths through the writer and
// closes the cache, as a first run of fastcopy over 100k files would.
// "walk" puts in walk order from one goroutine; "8workers" from 8 goroutines
// that each take every 8th directory, so the writer sees them interleaved.
func BenchmarkPut(b *testing.B) {
	const n = 100_000
	paths := walkPaths(n)
	run := func(b *testing.B, workers int) {
		var fileBytes, usedBytes int64
		for b.Loop() {
			path := filepath.Join(b.TempDir(), "hashes.db")
			c := openT(b, path, Options{})
			done := make(chan struct{})
			for w := range workers {
				go func() {
					defer func() { done <- struct{}{} }()
					for d := w; d*100 < n; d += workers {
						for i := d * 100; i < d*100+100; i++ {
							c.Put(paths[i], entryFor(i))
						}
					}
				}()
			}
			for range workers {
				<-done
			}
			s, _ := c.Stats()
			closeT(b, c)
			fileBytes, usedBytes = s.FileBytes, s.UsedBytes
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
		b.ReportMetric(float64(fileBytes)/n, "file-B/entry")
		b.ReportMetric(float64(usedBytes)/n, "used-B/entry")
	}
	b.Run("walk", func(b *testing.B) { run(b, 1) })
	b.Run("8workers", func(b *testing.B) { run(b, 8) })
}

// buildCache writes n walk-order entries and returns the path.
func buildCache(b *testing.B, n int) (string, []string) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "hashes.db")
	c := openT(b, path, Options{})
	paths := walkPaths(n)
	for i, p := range paths {
		c.Put(p, entryFor(i))
	}
	closeT(b, c)
	return path, paths
}

// BenchmarkLookup looks up all 100k entries of a warm cache, a directory
// (100 paths) per Lookup.
func BenchmarkLookup(b *testing.B) {
	path, paths := buildCache(b, 100_000)
	c := openT(b, path, Options{})
	defer closeT(b, c)
	for b.Loop() {
		lookupAll(b, c, paths)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(paths)), "ns/entry")
}

func lookupAll(b *testing.B, c *Cache, paths []string) {
	for d := 0; d < len(paths); d += 100 {
		for _, r := range c.Lookup(paths[d:min(d+100, len(paths))]) {
			if !r.Found {
				b.Fatal("miss")
			}
		}
	}
}

// BenchmarkGet looks up one entry per read transaction.
func BenchmarkGet(b *testing.B) {
	path, paths := buildCache(b, 100_000)
	c := openT(b, path, Options{})
	defer closeT(b, c)
	i := 0
	for b.Loop() {
		if _, ok := c.Get(paths[i]); !ok {
			b.Fatal("miss")
		}
		i = (i + 7919) % len(paths)
	}
}

// BenchmarkColdOpenLookup drops the page cache, then opens a cache of 100k
// or 1M entries and looks up every entry, with and without the sequential
// read at Open. It needs root and HASHCACHE_COLD=1, as it empties the page
// cache of the whole machine.
func BenchmarkColdOpenLookup(b *testing.B) {
	if os.Getenv("HASHCACHE_COLD") != "1" || os.Geteuid() != 0 {
		b.Skip("set HASHCACHE_COLD=1 and run as root: drops the page cache")
	}
	for _, n := range []int{100_000, 1_000_000} {
		path, paths := buildCache(b, n)
		for _, ra := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dk/readahead=%v", n/1000, ra), func(b *testing.B) {
				defer func(v int64) { readAheadMin = v }(readAheadMin)
				if !ra {
					readAheadMin = 1 << 62
				} else {
					readAheadMin = 0
				}
				var open time.Duration
				for b.Loop() {
					b.StopTimer()
					dropCaches(b)
					b.StartTimer()
					start := time.Now()
					c := openT(b, path, Options{})
					open += time.Since(start)
					lookupAll(b, c, paths)
					closeT(b, c)
				}
				b.ReportMetric(float64(open.Microseconds())/float64(b.N)/1000, "open-ms")
			})
		}
	}
}

func dropCaches(b *testing.B) {
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	// syncfs of everything first, as `sync` does, so dirty pages can go.
	if err := syncAll(); err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteString("3\n"); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenWarm opens and closes a warm 100k-entry cache, with and
// without the sequential read at Open: what the read costs when it is not
// needed.
func BenchmarkOpenWarm(b *testing.B) {
	path, _ := buildCache(b, 100_000)
	for _, ra := range []bool{false, true} {
		b.Run(fmt.Sprintf("readahead=%v", ra), func(b *testing.B) {
			defer func(v int64) { readAheadMin = v }(readAheadMin)
			if !ra {
				readAheadMin = 1 << 62
			} else {
				readAheadMin = 0
			}
			for b.Loop() {
				closeT(b, openT(b, path, Options{}))
			}
		})
	}
}

// BenchmarkShared stores 100k (or, with HASHCACHE_BIG=1, 1M) entries while
// another cache has the file open, so that they go to a journal ("journal":
// Put and Close), then opens the cache alone, which merges the journal into
// the file ("merge": Open). BenchmarkPut is the same work without a second
// cache.
func BenchmarkShared(b *testing.B) {
	n := 100_000
	if os.Getenv("HASHCACHE_BIG") == "1" {
		n = 1_000_000
	}
	paths := walkPaths(n)
	var journal, merge time.Duration
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "hashes.db")
		closeT(b, openT(b, path, Options{}))
		other := openT(b, path, Options{ReadOnly: true})
		start := time.Now()
		c := openT(b, path, Options{})
		for i, p := range paths {
			c.Put(p, entryFor(i))
		}
		closeT(b, c)
		journal += time.Since(start)
		if m, _ := filepath.Glob(path + ".j-*"); len(m) != 1 {
			b.Fatalf("journals %v, want 1", m)
		}
		closeT(b, other)
		start = time.Now()
		closeT(b, openT(b, path, Options{}))
		merge += time.Since(start)
		if m, _ := filepath.Glob(path + ".j-*"); len(m) != 0 {
			b.Fatalf("journals %v left after the merge", m)
		}
	}
	b.ReportMetric(float64(journal.Nanoseconds())/float64(b.N*n), "journal-ns/entry")
	b.ReportMetric(float64(merge.Nanoseconds())/float64(b.N*n), "merge-ns/entry")
}

// BenchmarkOpenPerOperation measures what opening the file for each
// operation would cost, the design not taken for lookups (see "Hash
// cache: runs that share it" in the history of docs/benchmarks.md, `git
// show 90fc376:docs/benchmarks.md`): bbolt Open and Close of a warm cache
// of 100k (HASHCACHE_BIG=1: 1M) entries, read-only and for writing, and a
// directory's lookup (100 paths) with and without an Open and Close
// around it.
func BenchmarkOpenPerOperation(b *testing.B) {
	n := 100_000
	if os.Getenv("HASHCACHE_BIG") == "1" {
		n = 1_000_000
	}
	path, paths := buildCache(b, n)
	readAhead(path)
	for _, ro := range []bool{true, false} {
		b.Run(fmt.Sprintf("open-close/readonly=%v", ro), func(b *testing.B) {
			for b.Loop() {
				db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: ro, Timeout: time.Second, NoStatistics: true})
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
	lookup := func(b *testing.B, db *bolt.DB, d int) {
		err := db.View(func(tx *bolt.Tx) error {
			bk := tx.Bucket(bucketFiles)
			for _, p := range paths[d*100%n : d*100%n+100] {
				if bk.Get([]byte(p)) == nil {
					b.Fatal("miss")
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("lookup/open", func(b *testing.B) {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, NoStatistics: true})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		d := 0
		for b.Loop() {
			lookup(b, db, d)
			d++
		}
	})
	b.Run("lookup/open-lookup-close", func(b *testing.B) {
		d := 0
		for b.Loop() {
			db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, NoStatistics: true})
			if err != nil {
				b.Fatal(err)
			}
			lookup(b, db, d)
			db.Close()
			d++
		}
	})
}
