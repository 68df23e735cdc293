//go:build linux

package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand"
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
// destination, and sharing one hash cache into two.
func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := scratchFS(t, 1<<30)
	tree := makeTree(t, filepath.Join(work, "src"), treeSpec{bytes: 40 << 20, seed: 2})
	t.Run("same destination", func(t *testing.T) { testSameDest(t, bin, work, tree) })
	t.Run("shared cache", func(t *testing.T) {
		testSharedCache(t, bin, work, makePlainTree(t, filepath.Join(work, "plain"), 3000))
	})
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
// a destination directory or a cache file.
func holds(t *testing.T, pid int, path string) bool {
	t.Helper()
	return hasFlock(t, pid, path, "WRITE")
}

// hasFlock reports whether the process pid holds a flock of kind (READ,
// WRITE) on path. It reads /proc/locks: trying the lock itself, even for a
// moment, could make the process's own attempt fail.
func hasFlock(t *testing.T, pid int, path, kind string) bool {
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
		if len(f) >= 6 && f[1] == "FLOCK" && f[3] == kind && f[4] == strconv.Itoa(pid) && f[5] == id {
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

// testSharedCache runs fastcopy processes that share one hash cache
// (--cache, the same file) into different destinations: neither waits for
// the other, both finish, and what each learned is in the cache for the
// runs after them; a run killed meanwhile costs the other nothing; two into
// one destination are still refused, for the destination; and the cache
// can be cleared while a run has it open.
//
// tree holds regular files only, with old mtimes, so that a rerun after a
// complete copy decides every file from the cache (see makePlainTree).
func testSharedCache(t *testing.T, bin, work string, tree *srcTree) {
	src := tree.root
	n := int64(len(tree.files))
	check := newChecker(tree)
	cache := filepath.Join(work, "shared.db")
	fresh := func(t *testing.T, names ...string) []string {
		t.Helper()
		if err := hashcacheClear(cache); err != nil {
			t.Fatal(err)
		}
		var ps []string
		for _, name := range names {
			p := filepath.Join(work, name)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		return ps
	}
	complete := func(t *testing.T, dsts ...string) {
		t.Helper()
		for _, d := range dsts {
			check.forget()
			check.complete(t, d)
		}
	}
	// rerun copies src to dst again and returns its report: with every
	// digest the cache should know, it reads nothing for them.
	rerun := func(t *testing.T, dst string) report {
		t.Helper()
		res := runBinary(t, bin, 0, 0, "--json", "--cache", cache, src, dst)
		if res.code != 0 {
			t.Fatalf("rerun into %s: exit %d:\n%s", dst, res.code, res.stderr)
		}
		return parseReport(t, res.stdout)
	}
	readFree := report{Skipped: n, CacheHits: 2 * n}

	// The first run has the cache open and is stopped there: the second,
	// into another destination, neither waits nor is refused. Both
	// finish, and a rerun of each finds every digest it needs in the
	// cache: neither run's entries were lost.
	t.Run("both finish", func(t *testing.T) {
		ds := fresh(t, "one", "two")
		a := startBinary(t, bin, "-q", "--cache", cache, src, ds[0])
		a.stopWhen(t, func() bool { return sharesCache(t, a.cmd.Process.Pid, cache) })
		rb := runBinary(t, bin, 0, 0, "-q", "--cache", cache, src, ds[1])
		if rb.code != 0 {
			t.Fatalf("the second run, while the first had the cache open: exit %d, want 0:\n%s", rb.code, rb.stderr)
		}
		a.resume(t)
		if ra := a.wait(t, 0, 0); ra.code != 0 {
			t.Fatalf("the first run: exit %d:\n%s", ra.code, ra.stderr)
		}
		complete(t, ds...)
		if m, _ := filepath.Glob(cache + ".j*"); len(m) != 0 {
			t.Errorf("journals left once both runs ended: %v", m)
		}
		for _, d := range ds {
			if r := rerun(t, d); r != readFree {
				t.Errorf("rerun into %s: %+v, want %+v: nothing read, two digests per file from the cache", d, r, readFree)
			}
		}
	})

	// Both at the same moment, as they come, twice: both finish, and the
	// cache opens cleanly after.
	t.Run("together", func(t *testing.T) {
		for trial := 0; trial < 2; trial++ {
			ds := fresh(t, "one", "two")
			a := startBinary(t, bin, "-q", "--cache", cache, src, ds[0])
			b := startBinary(t, bin, "-q", "--cache", cache, src, ds[1])
			ra, rb := a.wait(t, 0, 0), b.wait(t, 0, 0)
			if ra.code != 0 || rb.code != 0 {
				t.Fatalf("trial %d: exits %d and %d, want both 0:\n%s\n%s", trial, ra.code, rb.code, ra.stderr, rb.stderr)
			}
			t.Logf("trial %d: both done, after %v and %v", trial, ra.elapsed.Round(time.Millisecond), rb.elapsed.Round(time.Millisecond))
			complete(t, ds...)
			cacheOpens(t, bin, cache)
			for _, d := range ds {
				if r := rerun(t, d); r != readFree {
					t.Errorf("trial %d: rerun into %s: %+v, want %+v: entries were lost", trial, d, r, readFree)
				}
			}
		}
	})

	// One of two runs sharing the cache is killed (SIGKILL) after it has
	// written to its journal: the other finishes, merges what the dead
	// one's journal holds with its own, and leaves a cache the next run
	// opens with every entry of the survivor.
	t.Run("one killed", func(t *testing.T) {
		ds := fresh(t, "one", "two")
		a := startBinary(t, bin, "-q", "--cache", cache, src, ds[0])
		a.stopWhen(t, func() bool { return sharesCache(t, a.cmd.Process.Pid, cache) })
		b := startBinary(t, bin, "-q", "--cache", cache, src, ds[1])
		b.stopWhen(t, func() bool { return sharesCache(t, b.cmd.Process.Pid, cache) })
		a.resume(t)
		// a now writes to a journal: b has the cache open.
		deadline := time.Now().Add(30 * time.Second)
		for {
			m, _ := filepath.Glob(cache + ".j-*")
			if len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the first run wrote no journal while the second had the cache open")
			}
			time.Sleep(time.Millisecond)
		}
		if err := a.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if ra := a.wait(t, 0, 0); ra.signal != syscall.SIGKILL {
			t.Logf("the first run ended before it was killed (exit %d)", ra.code)
		}
		b.resume(t)
		if rb := b.wait(t, 0, 0); rb.code != 0 {
			t.Fatalf("the survivor: exit %d:\n%s", rb.code, rb.stderr)
		}
		complete(t, ds[1])
		if m, _ := filepath.Glob(cache + ".j*"); len(m) != 0 {
			t.Errorf("journals left after the survivor ended: %v", m)
		}
		cacheOpens(t, bin, cache)
		if r := rerun(t, ds[1]); r != readFree {
			t.Errorf("rerun of the survivor: %+v, want %+v: every digest from the cache", r, readFree)
		}
		// The killed run's copy is finished by its rerun.
		rerun(t, ds[0])
		complete(t, ds[0])
	})

	// Into one destination with one cache: the second is refused for the
	// destination (exit 5, at once), not kept waiting for the cache.
	t.Run("same destination", func(t *testing.T) {
		ds := fresh(t, "one")
		a := startBinary(t, bin, "-q", "--cache", cache, src, ds[0])
		a.stopWhen(t, func() bool {
			return holds(t, a.cmd.Process.Pid, ds[0]) && sharesCache(t, a.cmd.Process.Pid, cache)
		})
		before := names(t, ds[0])
		rb := runBinary(t, bin, 0, 0, "-q", "--cache", cache, src, ds[0])
		if rb.code != 5 || !strings.Contains(rb.stderr, "destination is locked") {
			t.Errorf("the second run into one destination: exit %d, want 5 for the destination:\n%s", rb.code, rb.stderr)
		}
		if after := names(t, ds[0]); after != before {
			t.Errorf("the refused run changed the destination:\nbefore %s\nafter  %s", before, after)
		}
		a.resume(t)
		if ra := a.wait(t, 0, 0); ra.code != 0 {
			t.Fatalf("the first run: exit %d:\n%s", ra.code, ra.stderr)
		}
		complete(t, ds[0])
	})

	// cache clear while a run has the cache open removes it at once; the
	// run finishes and stores what it learns from then on in a new cache,
	// which holds nothing from before the clear.
	t.Run("clear during a run", func(t *testing.T) {
		ds := fresh(t, "zero", "one")
		if r := runBinary(t, bin, 0, 0, "-q", "--cache", cache, src, ds[0]); r.code != 0 {
			t.Fatalf("preparing: exit %d:\n%s", r.code, r.stderr)
		}
		a := startBinary(t, bin, "-q", "--cache", cache, src, ds[1])
		a.stopWhen(t, func() bool { return sharesCache(t, a.cmd.Process.Pid, cache) })
		rc := runBinary(t, bin, 0, 0, "cache", "clear", "--cache", cache)
		if rc.code != 0 || rc.stdout != "removed "+cache+"\n" {
			t.Errorf("cache clear while a run has the cache open: exit %d, want 0:\n%s%s", rc.code, rc.stdout, rc.stderr)
		}
		if _, err := os.Lstat(cache); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the cache is still there after clear (%v)", err)
		}
		a.resume(t)
		if ra := a.wait(t, 0, 0); ra.code != 0 {
			t.Fatalf("the run: exit %d:\n%s", ra.code, ra.stderr)
		}
		complete(t, ds[1])
		cacheOpens(t, bin, cache)
		if r := rerun(t, ds[0]); r.BytesHashed == 0 {
			t.Errorf("rerun into %s read nothing: entries from before the clear are still there", ds[0])
		}
		if r := rerun(t, ds[1]); r.CacheHits == 0 {
			t.Errorf("rerun into %s: %+v, no digest from the cache the run stored after the clear", ds[1], r)
		}
	})
}

// makePlainTree writes n regular files of 4 to 12 KiB under root, in 30
// directories, each with an mtime in 2021: far enough in the past that the
// hash cache trusts the entries of the first run that reads them.
func makePlainTree(t *testing.T, root string, n int) *srcTree {
	t.Helper()
	tr := &srcTree{root: root, dirs: map[string]bool{".": true}, files: map[string][sha256.Size]byte{}, symlinks: map[string]string{}, shared: map[string]bool{}}
	r := rand.New(rand.NewSource(7))
	old := time.Date(2021, 6, 1, 10, 0, 0, 123456789, time.UTC)
	for i := 0; i < n; i++ {
		dir := "d" + strconv.Itoa(i%30)
		if !tr.dirs[dir] {
			if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
			tr.dirs[dir] = true
		}
		data := make([]byte, 4<<10+r.Intn(8<<10))
		r.Read(data)
		rel := filepath.Join(dir, "f"+strconv.Itoa(i))
		p := filepath.Join(root, rel)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		tr.files[rel] = sha256.Sum256(data)
	}
	return tr
}

// sharesCache reports whether the process pid has the hash cache at path
// open with the shared lock that a fastcopy holds for as long as it runs
// (and not in the middle of a commit, when it holds the file alone).
func sharesCache(t *testing.T, pid int, path string) bool {
	t.Helper()
	return hasFlock(t, pid, path, "READ")
}

// hashcacheClear removes a cache and its journals between subtests, with
// no fastcopy running.
func hashcacheClear(path string) error {
	m, _ := filepath.Glob(path + "*")
	for _, p := range m {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
