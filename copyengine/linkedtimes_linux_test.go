//go:build linux

package copyengine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
)

// A destination file with several names shares its times with all of
// them. When only its source's times moved, a rerun must not set them in
// place: that would change the other names too (the dedup link of another
// file, or an older snapshot made with cp -al). The file is replaced by a
// copy of its own instead, as for a new mode or owner.

func mtimeOf(t *testing.T, p string) time.Time {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime()
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestTimesFixOnDedupLink: b.bin is a dedup link of a.bin (ext4 cannot
// clone, so --dedup=auto links); touch -d on the source of b.bin and a
// cached rerun must leave a.bin's times alone.
func TestTimesFixOnDedupLink(t *testing.T) {
	t.Parallel()
	for _, checksum := range []bool{false, true} {
		name := "cache"
		if checksum {
			name = "checksum"
		}
		t.Run(name, func(t *testing.T) {
			scr := scratchDir(t)
			src, dst, db := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "hashes.db")
			data := pattern(7, 64<<10)
			writeFile(t, filepath.Join(src, "a.bin"), data)
			writeFile(t, filepath.Join(src, "b.bin"), data)
			old := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
			for _, n := range []string{"a.bin", "b.bin"} {
				if err := os.Chtimes(filepath.Join(src, n), old, old); err != nil {
					t.Fatal(err)
				}
			}
			opt := copyengine.Options{Sources: []string{src}, Dest: dst}
			if _, err := runCached(t, db, opt); err != nil {
				t.Fatal(err)
			}
			if inode(t, filepath.Join(dst, "a.bin")) != inode(t, filepath.Join(dst, "b.bin")) {
				t.Skip("skipped: the duplicate was not hard-linked here (this filesystem clones), so no name shares its times")
			}
			if out, err := exec.Command("touch", "-d", "2022-06-06", filepath.Join(src, "b.bin")).CombinedOutput(); err != nil {
				t.Fatalf("touch: %v: %s", err, out)
			}
			settleSources()
			opt.Checksum = checksum
			sum, err := runCached(t, db, opt)
			if err != nil {
				t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
			}
			if got := mtimeOf(t, filepath.Join(dst, "a.bin")); !got.Equal(old) {
				t.Errorf("dst/a.bin has mtime %v after only src/b.bin was touched; want %v", got, old)
			}
			sameTree(t, src, dst)
		})
	}
}

// TestTimesFixOnSnapshot: an earlier copy snapshotted with cp -al keeps its
// times when the source's times move and a rerun brings the copy up to
// date (with the cache, and with --checksum, which reads both sides).
func TestTimesFixOnSnapshot(t *testing.T) {
	t.Parallel()
	for _, checksum := range []bool{false, true} {
		name := "cache"
		if checksum {
			name = "checksum"
		}
		t.Run(name, func(t *testing.T) {
			scr := scratchDir(t)
			src, dst, snap, db := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "snap"), filepath.Join(scr, "hashes.db")
			writeFile(t, filepath.Join(src, "x.bin"), pattern(8, 32<<10))
			writeFile(t, filepath.Join(src, "empty"), nil)
			opt := copyengine.Options{Sources: []string{src}, Dest: dst}
			if _, err := runCached(t, db, opt); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-al", dst, snap).CombinedOutput(); err != nil {
				t.Fatalf("cp -al: %v: %s", err, out)
			}
			before := map[string]time.Time{}
			for _, n := range []string{"x.bin", "empty"} {
				before[n] = mtimeOf(t, filepath.Join(snap, n))
				if out, err := exec.Command("touch", "-d", "2022-06-06", filepath.Join(src, n)).CombinedOutput(); err != nil {
					t.Fatalf("touch: %v: %s", err, out)
				}
			}
			settleSources()
			opt.Checksum = checksum
			sum, err := runCached(t, db, opt)
			if err != nil {
				t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
			}
			for n, want := range before {
				if got := mtimeOf(t, filepath.Join(snap, n)); !got.Equal(want) {
					t.Errorf("snap/%s has mtime %v after the rerun into dst; want %v", n, got, want)
				}
			}
			sameTree(t, src, dst)
		})
	}
}

// TestTimesFixConcurrentWrite: a destination file written by someone else
// after the run listed it, but before its times are fixed, must not be
// recorded in the cache with the digest of what it held before (a rerun
// would then skip it for good). The write is made from the event of the
// file fixed just before it, so it lands in exactly that window.
func TestTimesFixConcurrentWrite(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst, db := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "hashes.db")
	writeFile(t, filepath.Join(src, "a"), pattern(21, 8192))
	writeFile(t, filepath.Join(src, "b"), pattern(22, 8192))
	old := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC) // not racy: the cache keeps the copies' digests
	for _, n := range []string{"a", "b"} {
		if err := os.Chtimes(filepath.Join(src, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1}
	if _, err := runCached(t, db, opt); err != nil {
		t.Fatal(err)
	}
	newTime := time.Date(2022, 6, 6, 0, 0, 0, 0, time.UTC)
	for _, n := range []string{"a", "b"} {
		if err := os.Chtimes(filepath.Join(src, n), newTime, newTime); err != nil {
			t.Fatal(err)
		}
	}
	settleSources()
	wrote := false
	opt.OnEvent = func(ev copyengine.Event) {
		if ev.Action == copyengine.ActMeta && ev.Path == "a" && !wrote {
			wrote = true
			f, err := os.OpenFile(filepath.Join(dst, "b"), os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := f.WriteAt(pattern(99, 8192), 0); err != nil {
				t.Error(err)
			}
			f.Close()
		}
	}
	if _, err := runCached(t, db, opt); err != nil {
		t.Logf("run with the write: %v", err)
	}
	if !wrote {
		t.Fatal("a's times were not fixed in place, so nothing was written in the window")
	}
	opt.OnEvent = nil
	sum, err := runCached(t, db, opt)
	if err != nil {
		t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
	}
	sameTree(t, src, dst)
}
