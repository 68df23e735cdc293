//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestConcurrentRuns runs two fastcopy processes at once, into one
// destination, and sharing one hash cache.
func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := scratchFS(t, 1<<30)
	tree := makeTree(t, filepath.Join(work, "src"), treeSpec{bytes: 40 << 20, seed: 2})
	t.Run("same destination", func(t *testing.T) { testSameDest(t, bin, work, tree) })
	t.Run("shared cache", func(t *testing.T) { testSharedCache(t, bin, work, tree) })
}

// testSameDest starts two fastcopy processes into one destination: while
// the first holds it, the second is refused with exit 5 and a hint and
// writes nothing; started at the same moment, from several states of the
// destination, one is refused while the other copies, or (when one had
// finished before the other looked) both finish. Either way the
// destination ends a complete, exact copy, with no temporary left.
func testSameDest(t *testing.T, bin, work string, tree *srcTree) {
	src, dst := tree.root, filepath.Join(work, "dst")
	check := newChecker(tree)

	// Deterministic first: the first run holds the destination (stopped
	// while it holds it), the second is refused at once and writes nothing.
	t.Run("held", func(t *testing.T) {
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
		check.forget()
		a := startBinary(t, bin, "-q", "--no-cache", src, dst)
		a.stopWhen(t, func() bool { return holds(t, a.cmd.Process.Pid, dst) })
		before := names(t, dst)
		rb := runBinary(t, bin, 0, 0, "-q", "--no-cache", src, dst)
		if rb.code != 5 || !strings.Contains(rb.stderr, "destination is locked") || !strings.Contains(rb.stderr, "fastcopy: hint: ") {
			t.Errorf("the second run: exit %d, want 5 with the reason and a hint:\n%s", rb.code, rb.stderr)
		}
		if after := names(t, dst); after != before {
			t.Errorf("the refused run changed the destination:\nbefore %s\nafter  %s", before, after)
		}
		a.resume(t)
		if ra := a.wait(t, 0, 0); ra.code != 0 {
			t.Fatalf("the first run: exit %d:\n%s", ra.code, ra.stderr)
		}
		check.complete(t, dst)
	})

	// Then both at the same moment, from different states of the
	// destination.
	refused := 0
	for trial, state := range []string{"missing", "empty", "half", "complete"} {
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
		check.forget()
		switch state {
		case "empty":
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case "half", "complete":
			if res := runBinary(t, bin, 0, 0, "-q", "--no-cache", src, dst); res.code != 0 {
				t.Fatalf("preparing the destination: exit %d\n%s", res.code, res.stderr)
			}
			if state == "half" {
				n := 0
				for rel := range tree.files {
					if n++; n%2 == 0 {
						if err := os.Remove(filepath.Join(dst, rel)); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
		// Each has a hash cache of its own: it is the destination they share.
		a := startBinary(t, bin, "-q", "--cache", filepath.Join(work, "a.db"), src, dst)
		b := startBinary(t, bin, "-q", "--cache", filepath.Join(work, "b.db"), src, dst)
		ra, rb := a.wait(t, 0, 0), b.wait(t, 0, 0)
		for _, r := range []result{ra, rb} {
			switch r.code {
			case 0:
			case 5:
				refused++
				if !strings.Contains(r.stderr, "destination is locked") || !strings.Contains(r.stderr, "fastcopy: hint: ") {
					t.Errorf("trial %d (%s): exit 5 without saying why and what to do:\n%s", trial, state, r.stderr)
				}
			default:
				t.Fatalf("trial %d (%s): exit %d, want 0 or 5:\n%s", trial, state, r.code, r.stderr)
			}
		}
		if ra.code != 0 && rb.code != 0 {
			t.Fatalf("trial %d (%s): both runs were refused:\n%s\n%s", trial, state, ra.stderr, rb.stderr)
		}
		t.Logf("trial %d, destination %s: exits %d and %d after %v and %v", trial, state, ra.code, rb.code,
			ra.elapsed.Round(time.Millisecond), rb.elapsed.Round(time.Millisecond))
		check.complete(t, dst)
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d of the runs started together were refused", refused)
	sameAsSource(t, tree, dst)
}

// holds reports whether the process pid holds an exclusive flock on path,
// a destination directory or a cache file. It reads /proc/locks: trying the
// lock itself, even for a moment, could make the process's own attempt
// fail.
func holds(t *testing.T, pid int, path string) bool {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false
		}
		t.Fatal(err)
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skipf("skipping: cannot see who holds which lock: %v", err)
	}
	for _, line := range strings.Split(string(locks), "\n") {
		// 1: FLOCK  ADVISORY  WRITE 22614 07:00:2 0 EOF
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "FLOCK" && f[3] == "WRITE" && f[4] == strconv.Itoa(pid) && f[5] == id {
			return true
		}
	}
	return false
}

// stopWhen stops the process (SIGSTOP) as soon as cond holds; it stays
// stopped, holding its locks, until resume. The test's cleanup resumes and
// kills it, should the test end first.
func (p *proc) stopWhen(t *testing.T, cond func() bool) {
	t.Helper()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		_ = p.cmd.Process.Kill()
	})
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("the first run ended (%v) before it could be stopped:\n%s", err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run never reached the point to stop it at")
		}
		time.Sleep(200 * time.Microsecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// SIGSTOP takes effect thread by thread; until every thread is stopped
	// the process may still write (a snapshot taken earlier would race it).
	for !allStopped(p.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("the first run did not stop")
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// allStopped reports whether every thread of pid is in the stopped state.
func allStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// The state follows the parenthesised command name.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// resume lets a process stopped by stopWhen go on.
func (p *proc) resume(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// names lists what is below root (names and sizes), to see whether
// anything was written.
func names(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + info.Mode().String() + " " + strconv.FormatInt(info.Size(), 10) + "\n")
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return b.String()
}

// testSharedCache runs two fastcopy processes that share one hash cache
// (--cache, the same file) into different destinations. Told to wait
// (--cache-wait), the second waits for the first and both finish; told not
// to (--cache-wait 0), it exits 5 at once with a message naming the cache
// and writes nothing. The copies are exact and the cache opens.
func testSharedCache(t *testing.T, bin, work string, tree *srcTree) {
	src := tree.root
	check := newChecker(tree)
	cache := filepath.Join(work, "shared.db")
	dst := func(t *testing.T, name string) string {
		t.Helper()
		p := filepath.Join(work, name)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// The first run holds the cache (stopped while it does): the second
	// waits, and goes on once the first is done.
	t.Run("wait", func(t *testing.T) {
		d1, d2 := dst(t, "one"), dst(t, "two")
		a := startBinary(t, bin, "-q", "--cache", cache, src, d1)
		a.stopWhen(t, func() bool { return holds(t, a.cmd.Process.Pid, cache) })
		b := startBinary(t, bin, "-q", "--cache", cache, "--cache-wait", "10m", src, d2)
		time.Sleep(500 * time.Millisecond)
		select {
		case err := <-b.done:
			b.done <- err
			t.Fatalf("the second run did not wait for the cache (%v):\n%s", err, b.stderr.String())
		default:
		}
		if _, err := os.Lstat(d2); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the waiting run created its destination before it had the cache (%v)", err)
		}
		a.resume(t)
		ra, rb := a.wait(t, 0, 0), b.wait(t, 0, 0)
		if ra.code != 0 || rb.code != 0 {
			t.Fatalf("exits %d and %d, want both 0:\n%s\n%s", ra.code, rb.code, ra.stderr, rb.stderr)
		}
		for _, d := range []string{d1, d2} {
			check.forget()
			check.complete(t, d)
		}
		if n := cacheOpens(t, bin, cache); n == 0 {
			t.Error("the shared cache is empty after two complete runs")
		}
	})

	// Told not to wait, the second is refused at once, naming the cache,
	// and writes nothing.
	t.Run("no wait", func(t *testing.T) {
		d1, d2 := dst(t, "one"), dst(t, "two")
		a := startBinary(t, bin, "-q", "--cache", cache, src, d1)
		a.stopWhen(t, func() bool { return holds(t, a.cmd.Process.Pid, cache) })
		rb := runBinary(t, bin, 0, 0, "-q", "--cache", cache, "--cache-wait", "0", src, d2)
		if rb.code != 5 {
			t.Errorf("exit %d, want 5 (the cache is in use):\n%s", rb.code, rb.stderr)
		}
		if !strings.Contains(rb.stderr, `"`+cache+`"`) || !strings.Contains(rb.stderr, "in use") {
			t.Errorf("the refusal does not name the cache %s:\n%s", cache, rb.stderr)
		}
		if rb.elapsed > time.Second {
			t.Errorf("--cache-wait 0 took %v to give up: it waited", rb.elapsed.Round(time.Millisecond))
		}
		if _, err := os.Lstat(d2); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused run created its destination (%v)", err)
		}
		a.resume(t)
		if ra := a.wait(t, 0, 0); ra.code != 0 {
			t.Fatalf("the first run: exit %d:\n%s", ra.code, ra.stderr)
		}
		check.forget()
		check.complete(t, d1)
	})

	// Both at the same moment, as they come: with the default wait, both
	// finish or one is refused naming the cache; nothing is corrupted.
	t.Run("together", func(t *testing.T) {
		for trial := 0; trial < 2; trial++ {
			d1, d2 := dst(t, "one"), dst(t, "two")
			a := startBinary(t, bin, "-q", "--cache", cache, src, d1)
			b := startBinary(t, bin, "-q", "--cache", cache, src, d2)
			ra, rb := a.wait(t, 0, 0), b.wait(t, 0, 0)
			for i, r := range []result{ra, rb} {
				d := []string{d1, d2}[i]
				switch r.code {
				case 0:
					check.forget()
					check.complete(t, d)
				case 5:
					if !strings.Contains(r.stderr, `"`+cache+`"`) {
						t.Errorf("trial %d: exit 5 without naming the cache:\n%s", trial, r.stderr)
					}
				default:
					t.Fatalf("trial %d: exit %d:\n%s", trial, r.code, r.stderr)
				}
			}
			if ra.code != 0 && rb.code != 0 {
				t.Fatalf("trial %d: both were refused", trial)
			}
			t.Logf("trial %d: exits %d and %d, after %v and %v", trial, ra.code, rb.code, ra.elapsed.Round(time.Millisecond), rb.elapsed.Round(time.Millisecond))
			cacheOpens(t, bin, cache)
		}
	})
}
