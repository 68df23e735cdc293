//go:build linux

package copyengine_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// xattrnospcValue is n random bytes: ext4 shares one block among entries
// whose attributes are equal, so each value is its own.
func xattrnospcValue(t *testing.T, n int) []byte {
	t.Helper()
	v := make([]byte, n)
	if _, err := rand.Read(v); err != nil {
		t.Fatal(err)
	}
	return v
}

// xattrnospcSet sets the attribute name of path (not following a
// symlink), or fails the test.
func xattrnospcSet(t *testing.T, path, name string, val []byte) {
	t.Helper()
	if err := unix.Lsetxattr(path, name, val, 0); err != nil {
		t.Fatalf("setting %s on %s: %v", name, path, err)
	}
}

// xattrnospcGet reads the attribute name of path (not following a
// symlink); ok is false when it has none, or path is gone.
func xattrnospcGet(t *testing.T, path, name string) (val []byte, ok bool) {
	t.Helper()
	buf := make([]byte, 128<<10)
	n, err := unix.Lgetxattr(path, name, buf)
	if errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOENT) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("reading %s of %s: %v", name, path, err)
	}
	return buf[:n], true
}

// xattrnospcTree writes, on a tmpfs (which holds attributes up to the
// kernel's 64 KiB), a source of which one file, one directory and (as
// root) a symlink and a FIFO carry an attribute of size bytes, and two
// small files none: what a destination that cannot hold it meets.
func xattrnospcTree(t *testing.T, size int) string {
	t.Helper()
	src := loopfs.Tmpfs(t, 16<<20).Path("src")
	writeFile(t, filepath.Join(src, "big"), pattern(1, 64<<10))
	writeFile(t, filepath.Join(src, "small"), []byte("a small file, no attributes\n"))
	writeFile(t, filepath.Join(src, "dir", "inner"), []byte("in a directory whose attribute does not fit\n"))
	xattrnospcSet(t, filepath.Join(src, "big"), "user.big", xattrnospcValue(t, size))
	xattrnospcSet(t, filepath.Join(src, "big"), "user.small", []byte("kept"))
	xattrnospcSet(t, filepath.Join(src, "dir"), "user.big", xattrnospcValue(t, size))
	if os.Geteuid() == 0 {
		// user.* is for files and directories only; trusted.* goes
		// anywhere, as root.
		if err := os.Symlink("big", filepath.Join(src, "link")); err != nil {
			t.Fatal(err)
		}
		xattrnospcSet(t, filepath.Join(src, "link"), "trusted.big", xattrnospcValue(t, size))
		if err := unix.Mkfifo(filepath.Join(src, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		xattrnospcSet(t, filepath.Join(src, "fifo"), "trusted.big", xattrnospcValue(t, size))
	}
	return src
}

// TestXattrTooLargeNotKept: an extended attribute larger than the
// destination holds for one entry (ext4 keeps an entry's attributes in one
// block, 4 KiB; btrfs in one leaf, about 16 KiB) makes setxattr answer
// ENOSPC on a filesystem with room to spare. That is a metadata the
// destination cannot keep, said once in the summary, not a full
// destination: every file is copied, the run succeeds, and the entry's
// other attributes are kept.
func TestXattrTooLargeNotKept(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fs   loopfs.Config
		size int
	}{
		{loopfs.Config{Type: "ext4", Size: 64 << 20, Mkfs: []string{"-b", "4096"}}, 12 << 10},
		{loopfs.Config{Type: "btrfs", Size: 128 << 20}, 30 << 10},
	} {
		t.Run(c.fs.Type, func(t *testing.T) {
			t.Parallel()
			src := xattrnospcTree(t, c.size)
			dst := loopfs.Mount(t, c.fs).Path("dst")
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst})
			var full *copyengine.DestFullError
			if errors.As(err, &full) {
				t.Fatalf("a %d-byte attribute read as a full destination: %v (failures %v)", c.size, err, sum.Failures)
			}
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if sum.Copied != 3 || sum.Failed != 0 {
				t.Errorf("copied %d, failed %d (%v); want the 3 files copied, none failed", sum.Copied, sum.Failed, sum.Failures)
			}
			for _, rel := range []string{"big", "small", "dir/inner"} {
				want, _ := os.ReadFile(filepath.Join(src, rel))
				if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: not copied as the source (%v)", rel, err)
				}
			}
			if len(sum.NotKept) != 1 || !strings.HasPrefix(sum.NotKept[0], "extended attributes: ") || !strings.Contains(sum.NotKept[0], "user.big") {
				t.Errorf("not kept: %q; want one note on extended attributes naming user.big", sum.NotKept)
			}
			if v, ok := xattrnospcGet(t, filepath.Join(dst, "big"), "user.small"); !ok || string(v) != "kept" {
				t.Errorf("big: user.small is %q (%v) on the copy: the attribute that fits must be kept beside the one that does not", v, ok)
			}
			if _, ok := xattrnospcGet(t, filepath.Join(dst, "big"), "user.big"); ok {
				t.Errorf("big: user.big on the copy, which the filesystem said it cannot hold")
			}
			if os.Geteuid() == 0 {
				if sum.Symlinks+sum.Specials != 2 {
					t.Errorf("%d symlinks/special placed; want the symlink and the FIFO", sum.Symlinks+sum.Specials)
				}
				if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "big" {
					t.Errorf("link: %q, %v; want the symlink to big", l, err)
				}
			}
			noTemps(t, dst)
		})
	}
}

// TestXattrTooLargeMoveKeepsSource: under --move, the source whose
// attribute the destination could not hold is kept (removing it would
// lose the attribute), the other is moved, and the run says the move is
// incomplete (exit 3), not that the destination is full.
func TestXattrTooLargeMoveKeepsSource(t *testing.T) {
	t.Parallel()
	src := loopfs.Tmpfs(t, 16<<20).Path("src")
	writeFile(t, filepath.Join(src, "big"), pattern(2, 32<<10))
	writeFile(t, filepath.Join(src, "small"), []byte("small\n"))
	xattrnospcSet(t, filepath.Join(src, "big"), "user.big", xattrnospcValue(t, 12<<10))
	dst := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20, Mkfs: []string{"-b", "4096"}}).Path("dst")
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Move: true})
	var mi *copyengine.MoveIncompleteError
	if !errors.As(err, &mi) || mi.Kept != 1 {
		t.Fatalf("Run: %v (failures %v); want a move incomplete by one source", err, sum.Failures)
	}
	if sum.Copied != 2 || sum.Failed != 0 || sum.SourcesKept != 1 || sum.SourcesRemoved != 1 {
		t.Errorf("copied %d, failed %d, sources kept %d, removed %d; want 2 copied, 1 kept, 1 removed", sum.Copied, sum.Failed, sum.SourcesKept, sum.SourcesRemoved)
	}
	if _, ok := xattrnospcGet(t, filepath.Join(src, "big"), "user.big"); !ok {
		t.Errorf("the source big, whose attribute only it holds, was removed")
	}
	if _, err := os.Lstat(filepath.Join(src, "small")); !os.IsNotExist(err) {
		t.Errorf("the source small was not moved: %v", err)
	}
}

// TestXattrNoSpaceFullStillFull: on a destination that is really full, an
// attribute that would fit an empty filesystem (600 bytes, one 1 KiB
// block) fails for want of a block: that setxattr's ENOSPC still stops
// the run as a full destination.
func TestXattrNoSpaceFullStillFull(t *testing.T) {
	t.Parallel()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 24 << 20, Mkfs: []string{"-b", "1024"}})
	dst := fs.Path("dst")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	xattrnospcFill(t, fs)
	src := loopfs.Tmpfs(t, 4<<20).Path("src")
	for i := range 3 {
		p := filepath.Join(src, fmt.Sprintf("empty%d", i))
		writeFile(t, p, nil)
		xattrnospcSet(t, p, "user.a", xattrnospcValue(t, 600))
	}
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst})
	var full *copyengine.DestFullError
	if !errors.As(err, &full) {
		t.Fatalf("Run on a full destination: %v (copied %d, not kept %q); want a full destination", err, sum.Copied, sum.NotKept)
	}
	if len(sum.Failures) != 1 || !strings.Contains(sum.Failures[0].Err, "setxattr") || !strings.Contains(sum.Failures[0].Err, "no space left") {
		t.Errorf("failures %v; want the one setxattr that found no space", sum.Failures)
	}
	if len(sum.NotKept) != 0 {
		t.Errorf("not kept: %q; a full destination is not a metadata the filesystem cannot keep", sum.NotKept)
	}
	noTemps(t, fs.Dir)
}

// xattrnospcFill fills fs until nothing more fits: data until a write
// fails, then (as data leaves blocks a write cannot take) attributes of
// their own block each until one fails.
func xattrnospcFill(t *testing.T, fs *loopfs.FS) {
	t.Helper()
	f, err := os.Create(fs.Path("ballast"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	if err := f.Close(); err != nil && !errors.Is(err, unix.ENOSPC) {
		t.Fatal(err)
	}
	unix.Sync()
	filler := fs.Path("filler")
	if err := os.Mkdir(filler, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		p := filepath.Join(filler, fmt.Sprint(i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			break
		}
		if err := unix.Setxattr(p, "user.a", xattrnospcValue(t, 600), 0); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	var st unix.Statfs_t
	if err := unix.Statfs(fs.Dir, &st); err != nil {
		t.Fatal(err)
	}
	t.Logf("filled: %d blocks of %d bytes free", st.Bavail, st.Bsize)
}

// TestXattrTooLargeMoveRerunKeepsSource: a source kept by --move because
// its copy lacks an attribute stays kept on the rerun the warning
// advises against, which finds the copy unchanged and sets no attribute:
// what decides is whether the copy holds the source's attributes, not
// whether this run met a refusal. A directory whose attribute its copy
// lacks is not removed once emptied either; the entries that lost nothing
// are moved.
func TestXattrTooLargeMoveRerunKeepsSource(t *testing.T) {
	t.Parallel()
	src := loopfs.Tmpfs(t, 16<<20).Path("src")
	writeFile(t, filepath.Join(src, "big"), pattern(3, 32<<10))
	writeFile(t, filepath.Join(src, "small"), []byte("small\n"))
	writeFile(t, filepath.Join(src, "tagged"), []byte("a small attribute, kept\n"))
	writeFile(t, filepath.Join(src, "dir", "inner"), []byte("inner\n"))
	xattrnospcSet(t, filepath.Join(src, "big"), "user.big", xattrnospcValue(t, 12<<10))
	xattrnospcSet(t, filepath.Join(src, "tagged"), "user.tag", []byte("fits"))
	xattrnospcSet(t, filepath.Join(src, "dir"), "user.big", xattrnospcValue(t, 12<<10))
	dst := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20, Mkfs: []string{"-b", "4096"}}).Path("dst")
	for run := 1; run <= 2; run++ {
		sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Move: true})
		var mi *copyengine.MoveIncompleteError
		if !errors.As(err, &mi) || mi.Kept != 2 || sum.SourcesKept != 2 {
			t.Errorf("run %d: %v (failures %v), %d sources kept; want a move incomplete by big and dir", run, err, sum.Failures, sum.SourcesKept)
		}
		if _, ok := xattrnospcGet(t, filepath.Join(src, "big"), "user.big"); !ok {
			t.Fatalf("run %d: the source big, whose attribute only it holds, was removed", run)
		}
		if _, ok := xattrnospcGet(t, filepath.Join(src, "dir"), "user.big"); !ok {
			t.Fatalf("run %d: the source directory dir, whose attribute only it holds, was removed", run)
		}
		for _, rel := range []string{"small", "tagged", "dir/inner"} {
			if _, err := os.Lstat(filepath.Join(src, rel)); !os.IsNotExist(err) {
				t.Errorf("run %d: the source %s, whose copy holds all it has, was not moved: %v", run, rel, err)
			}
		}
	}
	if v, ok := xattrnospcGet(t, filepath.Join(dst, "tagged"), "user.tag"); !ok || string(v) != "fits" {
		t.Errorf("tagged: user.tag %q on the copy", v)
	}
}
