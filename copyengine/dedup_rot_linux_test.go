//go:build linux

package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// physicalExtent returns the device offset and length of the first extent
// of path (FIEMAP, flushed first).
func physicalExtent(t *testing.T, path string) (off, n int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fm := fiemap{Length: ^uint64(0), Flags: fiemapFlagSync, Count: uint32(len(fiemap{}.Extents))}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&fm))); errno != 0 {
		t.Fatalf("FIEMAP %s: %v", path, errno)
	}
	if fm.Mapped == 0 {
		t.Fatalf("%s has no extent", path)
	}
	return int64(fm.Extents[0].Physical), int64(fm.Extents[0].Length)
}

// rot overwrites the first bytes of path on the filesystem's image, under
// the filesystem, so that its stat is unchanged, and drops its cached
// pages so that the next read sees the new bytes.
func rot(t *testing.T, fs *loopfs.FS, path string) {
	t.Helper()
	off, n := physicalExtent(t, path)
	img, err := os.OpenFile(fs.Image, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte{0xA5}, int(min(n, 4096)))
	if _, err := img.WriteAt(garbage, off); err != nil {
		t.Fatal(err)
	}
	if err := img.Sync(); err != nil {
		t.Fatal(err)
	}
	img.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(garbage))
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, garbage) {
		t.Skip("skipped: the bytes written on the image do not read back through the filesystem here")
	}
}

// TestDedupRehashesRottedTarget: a destination file the cache recorded
// rots on the device with its stat unchanged; a new source file with its
// old content must not be cloned from it without reading it, in any
// verify mode: the new file gets the right bytes.
func TestDedupRehashesRottedTarget(t *testing.T) {
	t.Parallel()
	for _, v := range []copyengine.VerifyMode{copyengine.VerifyOff, copyengine.VerifyCache, copyengine.VerifyDevice} {
		t.Run("verify="+string(v), func(t *testing.T) {
			fs := loopfs.Mount(t, reflinkFilesystems[0])
			src, dst := scratchDir(t), fs.Path("dst")
			db := filepath.Join(t.TempDir(), "hashes.db")
			data := pattern(130, 256<<10)
			writeFile(t, filepath.Join(src, "old.bin"), data)
			setTimes(t, filepath.Join(src, "old.bin"), oldTime)
			settleSources()
			if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 1 {
				t.Fatalf("first run: %v, copied %d", err, sum.Copied)
			}
			rot(t, fs, filepath.Join(dst, "old.bin"))

			// old.bin leaves the source (so the run leaves its copy alone); a
			// new file brings its content.
			noErr(t, os.Remove(filepath.Join(src, "old.bin")))
			writeFile(t, filepath.Join(src, "new.bin"), data)
			setTimes(t, filepath.Join(src, "new.bin"), oldTime)
			settleSources()
			sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: v})
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			got, err := os.ReadFile(filepath.Join(dst, "new.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("new.bin does not hold its source's bytes (%d duplicates cloned): it shares the rotted file's data", sum.DedupCloned)
			}
			if sum.DedupCloned != 0 || sum.Mismatches != 0 {
				t.Errorf("cloned %d, mismatches %d; want the rotted file found out before anything is shared from it", sum.DedupCloned, sum.Mismatches)
			}
		})
	}
}
