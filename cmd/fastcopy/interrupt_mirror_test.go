//go:build linux

package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sidesHold checks, after a killed --move, that every file of the tree is
// complete and right on at least one side: in the source (never written,
// only unlinked) or in the destination; and that nothing in the
// destination is wrong. It returns how many files each side holds.
func sidesHold(t *testing.T, tree *srcTree, c *checker, dst string) (inSrc, inDst int) {
	t.Helper()
	c.absentOrRight(t, dst) // what is in DEST is right
	for rel, want := range tree.files {
		if data, err := os.ReadFile(filepath.Join(dst, rel)); err == nil && sha256.Sum256(data) == want {
			inDst++
			if _, err := os.Lstat(filepath.Join(tree.root, rel)); err == nil {
				inSrc++
			}
			continue
		}
		data, err := os.ReadFile(filepath.Join(tree.root, rel))
		if err != nil {
			t.Errorf("%s is on neither side: not in DEST, and in the source: %v", rel, err)
			continue
		}
		if sha256.Sum256(data) != want {
			t.Errorf("%s is not in DEST and its source is not as it was", rel)
			continue
		}
		inSrc++
	}
	return inSrc, inDst
}

// killAtFault runs bin (built with fcfault) with FASTCOPY_FAULTS=spec, a
// fault that hangs the process at a known call, waits until reached says
// the run got there, and kills it with SIGKILL. A run that ends first
// fails the test: the fault never matched, and the moment it names was
// never tried.
func killAtFault(t *testing.T, bin, spec string, reached func() bool, args ...string) bool {
	t.Helper()
	p := startBinaryEnv(t, bin, []string{"FASTCOPY_FAULTS=" + spec}, args...)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		select {
		case <-p.done:
			t.Errorf("%s: the run ended before it reached the fault (the fault never matched):\n%s", spec, p.stderr.String())
			return false
		case <-time.After(5 * time.Millisecond):
		}
		if reached() {
			break
		}
		if time.Now().After(deadline) {
			_ = p.cmd.Process.Kill()
			t.Fatalf("%s: the run did not reach the fault in two minutes:\n%s", spec, p.stderr.String())
		}
	}
	// Still hanging at the fault: nothing more happens before the kill.
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	res := p.wait(t, 0, 0)
	return res.signal == syscall.SIGKILL
}

// countFiles counts the entries below root that are not directories,
// leaving out the directories of a run not yet put in place and the record of what it made.
func countFiles(root string) int {
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
		case d.IsDir() && strings.HasSuffix(d.Name(), ".fastcopy-tmp"):
			return fs.SkipDir
		case p == filepath.Join(root, ".fastcopy-made"):
			// the record of the temporaries a run made in DEST
		case !d.IsDir():
			n++
		}
		return nil
	})
	return n
}

// TestKillMove kills `fastcopy --move` at moments spread over its run, on
// a fresh source each round: after every kill each file exists, complete,
// in the source or in DEST; the rerun finishes the move: every file in
// DEST, none left in the source, only its root directory.
func TestKillMove(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: moves ~60 MB some ten times")
	}
	bin := buildFastcopy(t)
	work := scratchFS(t, 1<<30)
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	fresh := func(t *testing.T) *srcTree {
		t.Helper()
		for _, p := range []string{src, dst} {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
		}
		return makeTree(t, src, treeSpec{bytes: 60 << 20, seed: 3})
	}
	args := []string{"-q", "--no-cache", "--move", src, dst}
	tree := fresh(t)
	n := countFiles(src) // the source's removals: files, their other names, symlinks
	full := runBinary(t, bin, 0, 0, args...)
	if full.code != 0 {
		t.Fatalf("a full --move exited %d:\n%s", full.code, full.stderr)
	}
	d := full.elapsed
	t.Logf("a full --move of %d files takes %v", len(tree.files), d.Round(time.Millisecond))

	// Kills at moments of the copy, then with the run hung at the Nth
	// removal of a source file (a fault of the test build), N spread
	// from the first to the last.
	r := rand.New(rand.NewSource(20261201))
	points := []int{-3, -2, -1, 1, 2, n / 3, n / 2, n - 1, n}
	faultBin := buildFastcopy(t, "fcfault")
	for _, at := range points {
		tree := fresh(t)
		c := newChecker(tree)
		var killed bool
		if at < 0 {
			delay := time.Duration((float64(3+at) + r.Float64()) / 3 * 0.8 * float64(d))
			res := runBinary(t, bin, delay, syscall.SIGKILL, args...)
			killed = res.signal == syscall.SIGKILL
			if !killed && res.code != 0 {
				t.Fatalf("exit %d:\n%s", res.code, res.stderr)
			}
		} else {
			// Reached: DEST holds every file, and at-1 of the source's
			// are removed.
			srcFiles := countFiles(src)
			reached := func() bool { return countFiles(dst) == srcFiles && countFiles(src) == srcFiles-(at-1) }
			killed = killAtFault(t, faultBin, fmt.Sprintf("remove:hang:/src/#%d", at), reached, args...)
		}
		if killed {
			inSrc, inDst := sidesHold(t, tree, c, dst)
			t.Logf("kill at %3d: %4d files in the source, %4d in DEST", at, inSrc, inDst)
		}
		if res := runBinary(t, bin, 0, 0, args...); res.code != 0 {
			t.Fatalf("kill at %d: the rerun exited %d:\n%s", at, res.code, res.stderr)
		}
		c.complete(t, dst)
		left := 0
		_ = filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
			if err == nil && p != src {
				left++
			}
			return err
		})
		if left != 0 {
			t.Errorf("kill at %d: %d entries left in the source after the rerun", at, left)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

// TestKillDelete kills `fastcopy --delete` at moments spread over a run
// that copies a tree into a DEST holding a few thousand files the source
// lacks: after every kill, what DEST holds under the source's names is
// complete and right, and if any extra is gone every file of the source
// is in place (nothing is removed before the copy is durable); the rerun
// leaves exactly the source's tree.
func TestKillDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: copies ~60 MB some ten times")
	}
	bin := buildFastcopy(t)
	work := scratchFS(t, 1<<30)
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	tree := makeTree(t, src, treeSpec{bytes: 60 << 20, seed: 4})
	const extras = 3000
	fresh := func(t *testing.T) {
		t.Helper()
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < extras; i++ {
			p := filepath.Join(dst, "extra", fmt.Sprintf("e%02d", i/100), fmt.Sprintf("x%d", i))
			if i%100 == 0 {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(p, []byte("extra"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// check returns how many source files and extras DEST holds.
	check := func(t *testing.T) (files, extra int) {
		t.Helper()
		err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dst, p)
			if strings.HasSuffix(d.Name(), ".fastcopy-tmp") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if rel == "extra" || strings.HasPrefix(rel, "extra/") {
				if d.Type().IsRegular() {
					extra++
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			want, ok := tree.files[rel]
			if !ok && rel == ".fastcopy-made" {
				return nil // the record of the temporaries the killed run made
			}
			if !ok {
				t.Errorf("%s is in DEST, not in the source", rel)
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if sha256.Sum256(data) != want {
				t.Errorf("%s is under its final name but not its source's content", rel)
			}
			files++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files, extra
	}
	args := []string{"-q", "--no-cache", "--delete", src, dst}
	fresh(t)
	full := runBinary(t, bin, 0, 0, args...)
	if full.code != 0 {
		t.Fatalf("a full --delete exited %d:\n%s", full.code, full.stderr)
	}
	d := full.elapsed
	t.Logf("a full --delete run takes %v", d.Round(time.Millisecond))

	// Kills at moments of the copy, then with the run hung at the Nth
	// removal of an extra (the first comes right after the final flush),
	// N spread from the first to the last.
	r := rand.New(rand.NewSource(20261202))
	faultBin := buildFastcopy(t, "fcfault")
	for _, at := range []int{-3, -2, -1, 1, 2, extras / 2, extras - 1, extras} {
		fresh(t)
		var killed bool
		switch {
		case at < 0:
			delay := time.Duration((float64(3+at) + r.Float64()) / 3 * 0.8 * float64(d))
			res := runBinary(t, bin, delay, syscall.SIGKILL, args...)
			killed = res.signal == syscall.SIGKILL
			if !killed && res.code != 0 {
				t.Fatalf("exit %d:\n%s", res.code, res.stderr)
			}
		default:
			// Reached: DEST holds every file of the source, and at-1
			// extras are removed.
			srcFiles := countFiles(src)
			reached := func() bool {
				left := countFiles(filepath.Join(dst, "extra"))
				return left == extras-(at-1) && countFiles(dst) == srcFiles+left
			}
			killed = killAtFault(t, faultBin, fmt.Sprintf("remove:hang:/extra/#%d", at), reached, args...)
		}
		files, extra := check(t)
		if killed {
			if extra < extras && files != len(tree.files) {
				t.Errorf("kill at %d: %d extras removed while only %d of %d source files are in place", at, extras-extra, files, len(tree.files))
			}
			t.Logf("kill at %4d: %4d of %d files in place, %4d extras left", at, files, len(tree.files), extra)
		}
		if res := runBinary(t, bin, 0, 0, args...); res.code != 0 {
			t.Fatalf("kill at %d: the rerun exited %d:\n%s", at, res.code, res.stderr)
		}
		if _, err := os.Lstat(filepath.Join(dst, "extra")); !os.IsNotExist(err) {
			t.Errorf("kill at %d: extras left after the rerun (%v)", at, err)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	sameAsSource(t, tree, dst)
	noTemps(t, dst)
}
