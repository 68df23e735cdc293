package hashcache

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// holdEnv makes the test binary a helper that opens the cache named in it,
// stores /helper (entryFor(1)), says "ready", and holds it until its stdin
// is closed.
const holdEnv = "HASHCACHE_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		os.Exit(hold(path))
	}
	os.Exit(m.Run())
}

func hold(path string) int {
	c, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c.Put("/helper", entryFor(1))
	if err := c.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test closes it, or dies
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startHelper runs the helper env names on path and returns a function
// that lets it go and waits for it.
func startHelper(t *testing.T, env, path string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper: %v", err)
		}
	}
	t.Cleanup(release)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	return release
}

// holdAloneEnv makes the test binary a helper that opens the cache file
// with bbolt for writing, as a fastcopy before journals did: it holds the
// file alone for as long as it runs.
const holdAloneEnv = "HASHCACHE_TEST_HOLD_ALONE"

func init() {
	if path := os.Getenv(holdAloneEnv); path != "" {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = db.Close()
		os.Exit(0)
	}
}

// A process that has the file alone (an older fastcopy, or one stopped in
// the middle of a commit) makes Open wait LockTimeout, at least
// sharedLockGrace, and fail with ErrLocked; Clear does not wait for it.
func TestLockedByOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	closeT(t, openT(t, path, Options{})) // a cache of this schema
	release := startHelper(t, holdAloneEnv, path)

	defer func(d time.Duration) { sharedLockGrace = d }(sharedLockGrace)
	sharedLockGrace = 100 * time.Millisecond
	const timeout = 300 * time.Millisecond
	for _, ro := range []bool{false, true} {
		start := time.Now()
		c, err := Open(path, Options{LockTimeout: timeout, ReadOnly: ro})
		d := time.Since(start)
		if !errors.Is(err, ErrLocked) {
			if c != nil {
				c.Close()
			}
			t.Fatalf("Open(ReadOnly %v) while held = %v, want ErrLocked", ro, err)
		}
		if d < timeout-60*time.Millisecond || d > timeout+time.Second {
			t.Errorf("Open gave up after %v, want about %v", d, timeout)
		}
		t.Logf("read-only %v: %v after %v", ro, err, d)
	}
	start := time.Now()
	if _, err := Open(path, Options{LockTimeout: -1}); !errors.Is(err, ErrLocked) {
		t.Errorf("Open(LockTimeout -1) = %v, want ErrLocked", err)
	} else if d := time.Since(start); d < sharedLockGrace-60*time.Millisecond || d > sharedLockGrace+time.Second {
		t.Errorf("Open(LockTimeout -1) took %v, want about the grace of %v", d, sharedLockGrace)
	}
	release()
	c := openT(t, path, Options{LockTimeout: timeout})
	closeT(t, c)
}

// Two processes have one cache open for writing at once: each finds what
// was there before, neither waits, and what each stored is in the file
// once both have closed it, whichever closes first.
func TestSharedByOtherProcess(t *testing.T) {
	for _, helperFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("helper closes first %v", helperFirst), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hashes.db")
			c := openT(t, path, Options{})
			c.Put("/before", entryFor(0))
			closeT(t, c)

			release := startHelper(t, holdEnv, path) // stores /helper, holds the cache
			start := time.Now()
			c = openT(t, path, Options{LockTimeout: -1})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Open took %v while another process had the cache open", d)
			}
			if e, ok := c.Get("/before"); !ok || e != entryFor(0) {
				t.Errorf("an entry from before: %+v, %v", e, ok)
			}
			c.Put("/mine", entryFor(2))
			flushT(t, c)
			if e, ok := c.Get("/mine"); !ok || e != entryFor(2) {
				t.Errorf("own entry after Flush: %+v, %v", e, ok)
			}
			if helperFirst {
				release()
				closeT(t, c)
			} else {
				closeT(t, c)
				release()
			}
			if m, _ := filepath.Glob(path + ".j*"); len(m) != 0 {
				t.Errorf("journals left once both closed: %v", m)
			}
			c = openT(t, path, Options{ReadOnly: true})
			defer closeT(t, c)
			for i, p := range []string{"/before", "/helper", "/mine"} {
				if e, ok := c.Get(p); !ok || e != entryFor(i) {
					t.Errorf("%s after both closed: %+v, %v", p, e, ok)
				}
			}
			if s, err := c.Stats(); err != nil || s.Entries != 3 || s.Pending != 0 {
				t.Errorf("Stats = %+v, %v; want 3 entries, none pending", s, err)
			}
		})
	}
}

// Two caches open in one process share the file as two processes do.
func TestSharedInProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	a := openT(t, path, Options{})
	b := openT(t, path, Options{LockTimeout: -1})
	a.Put("/a", entryFor(1))
	b.Put("/b", entryFor(2))
	flushT(t, a)
	flushT(t, b)
	if _, ok := b.Get("/a"); ok {
		t.Error("b sees what a stored after b opened: it reads a's journal")
	}
	closeT(t, a)
	c := openT(t, path, Options{ReadOnly: true})
	if e, ok := c.Get("/a"); !ok || e != entryFor(1) {
		t.Errorf("a finished journal is not read: %+v, %v", e, ok)
	}
	if s, _ := c.Stats(); s.Pending != 1 {
		t.Errorf("Stats.Pending = %d, want 1 (a's journal)", s.Pending)
	}
	closeT(t, c)
	closeT(t, b)
	c = openT(t, path, Options{ReadOnly: true})
	defer closeT(t, c)
	for i, p := range []string{"/a", "/b"} {
		if e, ok := c.Get(p); !ok || e != entryFor(i+1) {
			t.Errorf("%s: %+v, %v", p, e, ok)
		}
	}
	if m, _ := filepath.Glob(path + ".j*"); len(m) != 0 {
		t.Errorf("journals left: %v", m)
	}
}

// A journal larger than mergeBudget is merged in parts: whoever has the
// file alone merges one part per commit, and Close the rest, letting the
// file go between parts; what is not merged yet is read from the journal.
func TestMergeInParts(t *testing.T) {
	defer func(n int, d time.Duration) { mergeBudget, mergePause = n, d }(mergeBudget, mergePause)
	mergeBudget, mergePause = 7, time.Millisecond
	path := filepath.Join(t.TempDir(), "hashes.db")
	paths := walkPaths(60)
	check := func(t *testing.T, c *Cache, n int) {
		t.Helper()
		for i, r := range c.Lookup(paths[:n]) {
			if want := i%10 != 3; r.Found != want || (want && r.Entry != entryFor(i)) {
				t.Fatalf("entry %d: %+v, found %v, want found %v", i, r.Entry, r.Found, want)
			}
		}
	}

	// Another process's journal, merged by a later Open and Close.
	holder := openT(t, path, Options{})
	c := openT(t, path, Options{})
	for i, p := range paths[:50] {
		c.Put(p, entryFor(i))
	}
	for i := 3; i < 50; i += 10 {
		c.Delete(paths[i])
	}
	closeT(t, c) // journal left: the holder has the file open
	closeT(t, holder)
	c = openT(t, path, Options{})
	if n := c.journals.merged.Load(); n != 0 {
		t.Errorf("Open merged %d journals whole, want a part of one", n)
	}
	check(t, c, 50)
	closeT(t, c)
	if m, _ := filepath.Glob(path + ".j*"); len(m) != 0 {
		t.Errorf("journals left after Close: %v", m)
	}

	// This process's own journal: what it commits while the journal is
	// not merged whole goes after it, into it.
	holder = openT(t, path, Options{ReadOnly: true})
	c = openT(t, path, Options{})
	for i, p := range paths[:50] {
		e := entryFor(i) // hashed earlier: replaced below
		e.Size++
		e.HashedAt--
		c.Put(p, e)
	}
	flushT(t, c)
	closeT(t, holder)
	for i, p := range paths[:55] {
		if i%10 == 3 {
			c.Delete(p)
		} else {
			c.Put(p, entryFor(i))
		}
	}
	flushT(t, c)
	if c.journals.own == nil {
		t.Fatal("the journal was merged whole in one commit")
	}
	check(t, c, 55)
	closeT(t, c)
	c = openT(t, path, Options{ReadOnly: true})
	defer closeT(t, c)
	check(t, c, 55)
	if s, _ := c.Stats(); s.Pending != 0 || s.Entries != 49 {
		t.Errorf("Stats = %+v, want 49 entries, none pending", s)
	}
	if m, _ := filepath.Glob(path + ".j*"); len(m) != 0 {
		t.Errorf("journals left after Close: %v", m)
	}
}
