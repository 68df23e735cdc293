package copyengine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/copyengine/internal/loopfs"
)

// needCut skips a test that cuts power to a filesystem where it cannot.
func needCut(t *testing.T) {
	t.Helper()
	if err := loopfs.CanCut(); err != nil {
		if os.Getenv(loopfs.RequireEnv) != "" {
			t.Fatalf("%v (and %s is set)", err, loopfs.RequireEnv)
		}
		t.Skipf("skipping: %v", err)
	}
}

// TestPowerCutMountInsideDest: a filesystem mounted inside DEST is flushed
// as DEST's own is. DEST is on ext4 with an xfs filesystem mounted at
// DEST/photos; right after the run exits 0 the xfs filesystem loses power
// (shut down without writing its log) and is mounted again: every file the
// run reported must be there, whole.
func TestPowerCutMountInsideDest(t *testing.T) {
	needCut(t)
	outer := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	dst := outer.Path("dst")
	photos := filepath.Join(dst, "photos")
	if err := os.MkdirAll(photos, 0o755); err != nil {
		t.Fatal(err)
	}
	inner, err := loopfs.Attach(loopfs.Config{Type: "xfs", Size: 300 << 20}, filepath.Join(t.TempDir(), "inner.img"), photos)
	if err != nil {
		t.Skipf("skipping: cannot mount xfs inside DEST: %v", err)
	}
	t.Cleanup(func() {
		if err := inner.Detach(); err != nil {
			t.Error(err)
		}
	})

	src := filepath.Join(t.TempDir(), "src")
	for i := 0; i < 50; i++ {
		writeFile(t, filepath.Join(src, "photos", "album", flatName(i)), pattern(int64(i), 4096+i*1000))
	}
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst})
	if err != nil || sum.Copied != 50 {
		t.Fatalf("run: %v, %d copied (want 50)", err, sum.Copied)
	}
	if err := inner.Cut(false); err != nil {
		t.Fatal(err)
	}
	if err := inner.Remount(); err != nil {
		t.Fatal(err)
	}
	n := finalFilesMatch(t, filepath.Join(src, "photos"), photos)
	if n != 50 {
		t.Errorf("after the power cut %d of 50 files are in DEST/photos, though the run exited 0", n)
	}
}
