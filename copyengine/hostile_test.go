//go:build linux

package copyengine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/fastcopy/fastcopy/copyengine"
)

// The destination is not to be trusted: someone may have planted symlinks,
// hard links, FIFOs or names of temporaries in it. These tests plant them
// and check that nothing outside the destination is written, and that what
// is inside ends up right or fails with a clear message.

// snapshot records everything below root that a write through a link
// would change: names, types, modes, sizes, times, inodes and contents.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		s := fmt.Sprintf("mode %o size %d mtime %d.%09d ino %d nlink %d", st.Mode, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ino, st.Nlink)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += fmt.Sprintf(" sha256 %x", sha256.Sum256(b))
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// untouched fails the test for every difference between root now and an
// earlier snapshot of it (nlink may be given as moved for names whose
// other link the copy was to replace).
func untouched(t *testing.T, root string, before map[string]string, nlinkMoves ...string) {
	t.Helper()
	after := snapshot(t, root)
	ignore := map[string]bool{}
	for _, n := range nlinkMoves {
		ignore[n] = true
	}
	strip := func(s string) string {
		if i := strings.Index(s, " nlink "); i >= 0 {
			j := strings.Index(s[i+1:], " sha256")
			if j < 0 {
				return s[:i]
			}
			return s[:i] + s[i+1+j:]
		}
		return s
	}
	for rel, b := range before {
		a, ok := after[rel]
		switch {
		case !ok:
			t.Errorf("outside the destination, %s was removed", filepath.Join(root, rel))
		case ignore[rel] && strip(a) != strip(b), !ignore[rel] && a != b:
			t.Errorf("outside the destination, %s changed:\n  before %s\n  after  %s", filepath.Join(root, rel), b, a)
		}
	}
	for rel := range after {
		if _, ok := before[rel]; !ok {
			t.Errorf("outside the destination, %s appeared", filepath.Join(root, rel))
		}
	}
}

// TestHostileSymlinkedDir plants symlinks to a directory outside the
// destination where the source has directories (one at the top, one deeper,
// both absolute): nothing is written through them, each fails alone with a
// message that says why, and the rest of the tree is copied.
func TestHostileSymlinkedDir(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst, outside := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "outside")
	for rel, data := range map[string][]byte{
		"a":             pattern(60, 5000),
		"sub/a":         pattern(61, 7000), // the same name as a file outside
		"sub/deeper/b":  pattern(62, 300000),
		"x/y/sub2/c":    pattern(63, 10),
		"x/y/other":     pattern(64, 4096),
		"x/y/sub2/d/e/": nil,
	} {
		if strings.HasSuffix(rel, "/") {
			if err := os.MkdirAll(filepath.Join(src, rel), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeFile(t, filepath.Join(src, rel), data)
	}
	writeFile(t, filepath.Join(outside, "a"), []byte("outside: not to be overwritten\n"))
	if err := os.Mkdir(filepath.Join(outside, "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, outside)

	if err := os.MkdirAll(filepath.Join(dst, "x", "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"sub", "x/y/sub2"} {
		if err := os.Symlink(outside, filepath.Join(dst, l)); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Errorf("Run returned %v, want ErrSomeFailed (exit 3)", err)
	}
	failed := map[string]string{}
	for _, f := range sum.Failures {
		failed[f.Path] = f.Err
	}
	for _, l := range []string{"sub", "x/y/sub2"} {
		msg, ok := failed[l]
		if !ok {
			t.Errorf("%s did not fail; failures: %v", l, sum.Failures)
			continue
		}
		if !strings.Contains(msg, "symlink") {
			t.Errorf("the failure of %s does not say a symlink is in the way: %q", l, msg)
		}
		if st, err := os.Lstat(filepath.Join(dst, l)); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer the planted symlink (%v)", l, err)
		}
	}
	if len(failed) != 2 {
		t.Errorf("failures %v; want only the two symlinked directories", sum.Failures)
	}
	for _, rel := range []string{"a", "x/y/other"} {
		got, err := os.ReadFile(filepath.Join(dst, rel))
		if want, _ := os.ReadFile(filepath.Join(src, rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s was not copied (%v)", rel, err)
		}
	}
	untouched(t, outside, before)
	noTemps(t, dst)
	noTemps(t, outside)
}

// TestHostileLinkedFiles plants, where the source has regular files, a
// symlink to a file outside, a hard link to a file outside (with the
// source's size and mtime, so only content tells them apart), a FIFO, and
// names of temporaries that are symlinks and hard links to files outside.
// Every one is replaced by a rename, never opened for writing; the files
// outside keep their content, mode and times.
func TestHostileLinkedFiles(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst, outside := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "outside")
	names := []string{"symlinked", "hardlinked", "samestat", "fifo", "tmp-symlink", "tmp-hardlink"}
	for i, n := range names {
		writeFile(t, filepath.Join(src, n), pattern(int64(70+i), 3000+i))
	}
	for _, n := range names {
		writeFile(t, filepath.Join(outside, n), []byte("outside "+n+": keep me\n"))
	}
	// An outside file as large as its source, with its mtime: only the
	// content differs.
	same := filepath.Join(outside, "samestat")
	writeFile(t, same, bytes.Repeat([]byte{'o'}, 3000+2))
	mtime := time.Date(2020, 2, 2, 2, 2, 2, 2, time.UTC)
	for _, p := range []string{same, filepath.Join(src, "samestat")} {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, outside)

	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	d := func(n string) string { return filepath.Join(dst, n) }
	o := func(n string) string { return filepath.Join(outside, n) }
	for _, err := range []error{
		os.Symlink(o("symlinked"), d("symlinked")),
		os.Link(o("hardlinked"), d("hardlinked")),
		os.Link(same, d("samestat")),
		syscall.Mkfifo(d("fifo"), 0o644),
		os.Symlink(o("tmp-symlink"), d(".tmp-symlink"+tempSuffix)),
		os.Link(o("tmp-hardlink"), d(".tmp-hardlink"+tempSuffix)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}

	// A FIFO opened for writing would block: a hang is a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := copyengine.Run(ctx, copyengine.Options{Sources: []string{src}, Dest: dst})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	// By size and mtime, the hard link with the source's stats is up to
	// date (the rsync rule) and left as it is; everything else is replaced.
	for _, n := range names {
		st, err := os.Lstat(d(n))
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if n == "samestat" {
			if !os.SameFile(st, statPath(t, same)) {
				t.Errorf("%s was replaced though size and mtime match", n)
			}
			continue
		}
		if !st.Mode().IsRegular() || st.Sys().(*syscall.Stat_t).Nlink != 1 {
			t.Errorf("%s is not a file of its own in the copy: %v", n, st.Mode())
		}
		got, _ := os.ReadFile(d(n))
		if want, _ := os.ReadFile(filepath.Join(src, n)); !bytes.Equal(got, want) {
			t.Errorf("%s: the copy differs from its source", n)
		}
	}
	// The names planted like temporaries are not the run's (no record
	// names them): left alone, neither followed nor written through.
	for _, n := range []string{".tmp-symlink" + tempSuffix, ".tmp-hardlink" + tempSuffix} {
		if _, err := os.Lstat(d(n)); err != nil {
			t.Errorf("%s, planted in DEST, was removed though no run made it: %v", n, err)
		}
		_ = os.Remove(d(n))
	}
	noTemps(t, dst)
	untouched(t, outside, before, "hardlinked", "tmp-hardlink", "samestat")

	// --checksum reads both: the content differs, and the name is replaced,
	// not written through.
	sum, err = copyengine.Run(ctx, copyengine.Options{Sources: []string{src}, Dest: dst, Checksum: true})
	if err != nil {
		t.Fatalf("Run --checksum: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 1 {
		t.Errorf("--checksum copied %d files, want the one whose content differs", sum.Copied)
	}
	sameTree(t, src, dst)
	noTemps(t, dst)
	untouched(t, outside, before, "hardlinked", "tmp-hardlink", "samestat")
}

// statPath returns what lstat says of p.
func statPath(t *testing.T, p string) os.FileInfo {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestHostileTempNames gives the source names that collide with the names
// of other files' temporaries, as a tree copied from anywhere may: a name
// shaped like the digest form of a long name's temporary, a name like the
// temporary of its neighbour, and one like the temporary chosen when that
// one is taken. Each file still lands under its own name with its own
// content, verified or not, and nothing is reported copied that is not in
// place.
func TestHostileTempNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("L", 245)
	taken := fmt.Sprintf("a~%016x", xxh3.HashString("a\x00taken"))
	cases := map[string][]string{
		"digest-shaped name": {long, fmt.Sprintf("%s~%016x", long[:200], xxh3.HashString(long))},
		"neighbour's temp":   {"a", ".a" + tempSuffix, "." + taken + tempSuffix},
		"alternate taken":    {"a", ".a" + tempSuffix, taken},
	}
	for name, files := range cases {
		for _, v := range []copyengine.VerifyMode{copyengine.VerifyOff, copyengine.VerifyDevice} {
			t.Run(name+"/verify="+string(v), func(t *testing.T) {
				scr := scratchDir(t)
				src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
				for i, f := range files {
					writeFile(t, filepath.Join(src, f), pattern(int64(80+i), 1000+100*i))
				}
				for run := 1; run <= 2; run++ {
					sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: v, Jobs: 1})
					if err != nil {
						t.Fatalf("run %d: %v (failures %v)", run, err, sum.Failures)
					}
					if got := sum.Copied + sum.Skipped; got != int64(len(files)) {
						t.Errorf("run %d: copied %d, skipped %d; want %d files accounted for", run, sum.Copied, sum.Skipped, len(files))
					}
					sameTree(t, src, dst)
					if run == 2 && sum.Copied != 0 {
						t.Errorf("the rerun copied %d files again", sum.Copied)
					}
				}
			})
		}
	}
}

// TestTempCreatedPrivate watches the temporary of a large setuid file
// while its data is written: until the data is complete it has mode 0600,
// so no one else can read a partial copy and no setuid program exists
// half-written. (A temporary seen shorter than its source is one whose
// mode has not been set yet: the mode is set after the last write.)
func TestTempCreatedPrivate(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	const size = 512 << 20
	big := filepath.Join(src, "big")
	writeAllocated(t, big, size)
	if err := syscall.Chmod(big, 0o4755); err != nil {
		t.Fatal(err)
	}

	tmp := filepath.Join(dst, ".big"+tempSuffix)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan []uint32, 1)
	go func() {
		var modes []uint32
		defer func() { seen <- modes }()
		for ctx.Err() == nil {
			var st syscall.Stat_t
			if err := syscall.Lstat(tmp, &st); err == nil && st.Size > 0 && st.Size < size {
				modes = append(modes, st.Mode&0o7777)
				if len(modes) >= 20 {
					cancel() // seen enough: no need to copy the rest
					return
				}
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	// --no-resume: the stopped run removes the temporary, as checked below.
	_, err := copyengine.Run(ctx, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever, NoResume: true})
	cancel()
	modes := <-seen
	if len(modes) == 0 {
		t.Fatalf("the temporary was never seen while it was written (Run: %v)", err)
	}
	for _, m := range modes {
		if m != 0o600 {
			t.Fatalf("the temporary had mode %04o while it was written; want 0600 (all seen: %o)", m, modes)
		}
	}
	t.Logf("saw the temporary %d times while it was written, always 0600", len(modes))
	noTemps(t, dst)
}
