//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// lockfile FILE holds an exclusive flock on FILE until the script ends, as
// a running fastcopy holds its hash cache.
func cmdLockfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lockfile FILE")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Defer(func() { f.Close() })
	ts.Check(unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB))
}

// noExitSleep spares the runs of a -race build of fastcopy the second the
// race detector otherwise waits as a process exits with status 0.
func noExitSleep(t *testing.T) {
	t.Setenv("GORACE", "atexit_sleep_ms=0")
}

// report is the part of the --json report these tests read.
type report struct {
	Copied      int64 `json:"copied"`
	Skipped     int64 `json:"skipped"`
	Failed      int64 `json:"failed"`
	CacheHits   int64 `json:"cache_hits"`
	BytesHashed int64 `json:"bytes_hashed"`
	BytesRead   int64 `json:"bytes_read"`
}

func parseReport(t *testing.T, out string) report {
	t.Helper()
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	return r
}

// writeOld writes a file with an mtime in 2021, well outside the window in
// which the hash cache distrusts a fresh mtime.
func writeOld(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2021, 6, 1, 10, 0, 0, 123456789, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestCacheRerunReadFreeManyFiles copies a tree of more files than the
// cache commits in one transaction, in many directories, and reruns it: every
// file is decided from two cache entries, none is read.
func TestCacheRerunReadFreeManyFiles(t *testing.T) {
	noExitSleep(t)
	const n = 1200 // 2,400 entries: more than one write batch
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	for i := 0; i < n; i++ {
		writeOld(t, filepath.Join(src, fmt.Sprintf("d%02d", i%37), fmt.Sprintf("f%04d", i)), []byte(fmt.Sprintf("file %d\n", i)))
	}
	// Let the ctimes settle, so that the first run reads every file at once.
	time.Sleep(100 * time.Millisecond)
	r := &runner{t: t}
	first := parseReport(t, r.mustRun("fastcopy", "--json", src, dst))
	if first.Copied != n {
		t.Fatalf("first run copied %d files, want %d", first.Copied, n)
	}
	got := parseReport(t, r.mustRun("fastcopy", "--json", src, dst))
	want := report{Skipped: n, CacheHits: 2 * n}
	if got != want {
		t.Errorf("rerun: %+v, want %+v (nothing read, two digests per file from the cache)", got, want)
	}
}

// TestCacheLockedExit5 holds the hash cache's lock exclusively, as a
// fastcopy from before caches were shared would (or one stopped while it
// commits), and starts another: it waits about --cache-wait for the cache, then
// exits 5 with a message that names the cache and a hint to run with
// --no-cache, having written nothing.
func TestCacheLockedExit5(t *testing.T) {
	noExitSleep(t)
	work := t.TempDir()
	src := filepath.Join(work, "src")
	writeOld(t, filepath.Join(src, "a.txt"), []byte("alpha\n"))
	r := &runner{t: t}
	r.mustRun("fastcopy", "-q", src, filepath.Join(work, "first")) // makes the cache
	db := filepath.Join(r.cache, "fastcopy", "hashes.db")
	f, err := os.Open(db)
	if err != nil {
		t.Fatalf("the first run left no cache: %v", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	// The default wait is 5s; each of these must end soon after its own,
	// or after the second every wait lasts at least (a commit of another
	// run holds the cache alone for a moment).
	for _, wait := range []time.Duration{250 * time.Millisecond, 1500 * time.Millisecond} {
		t.Run(wait.String(), func(t *testing.T) {
			dst := filepath.Join(work, "dst-"+wait.String())
			r := &runner{t: t, cache: r.cache}
			start := time.Now()
			stdout, stderr, code := r.run("fastcopy", "--cache-wait", wait.String(), src, dst)
			elapsed := time.Since(start)
			if code != exitLocked {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitLocked, stdout, stderr)
			}
			// bbolt polls the lock every 50ms and gives up on the poll
			// before the deadline.
			want := max(wait, time.Second)
			if elapsed < want-100*time.Millisecond || elapsed > want+1500*time.Millisecond {
				t.Errorf("exited after %v with --cache-wait %v", elapsed.Round(time.Millisecond), wait)
			}
			if !strings.Contains(stderr, fmt.Sprintf("fastcopy: error: hash cache %q: ", db)) ||
				!strings.Contains(stderr, "in use by another fastcopy") {
				t.Errorf("the error does not name the busy cache %q:\n%s", db, stderr)
			}
			if !strings.Contains(stderr, "\nfastcopy: hint: ") || !strings.Contains(stderr, "--no-cache") {
				t.Errorf("no hint to run with --no-cache:\n%s", stderr)
			}
			if _, err := os.Lstat(dst); err == nil {
				t.Errorf("the refused run created %s", dst)
			}
		})
	}

	// As the hint says: without the cache the copy goes through.
	dst := filepath.Join(work, "nocache")
	r.mustRun("fastcopy", "-q", "--no-cache", "--cache-wait", "100ms", src, dst)
	if b, err := os.ReadFile(filepath.Join(dst, "a.txt")); err != nil || string(b) != "alpha\n" {
		t.Errorf("--no-cache run: a.txt is %q, %v", b, err)
	}
}
