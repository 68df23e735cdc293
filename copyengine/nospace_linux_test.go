package copyengine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestDiskFull copies a tree larger than the space left on a small
// filesystem: the run stops at the first file that does not fit, with one
// failure that names the cause and one error that names the destination,
// nothing is left half-written under a final name or as a temporary, and
// once space is freed a rerun finishes the copy.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"ext4", "tmpfs"} {
		t.Run(kind, func(t *testing.T) {
			var fs *loopfs.FS
			if kind == "tmpfs" {
				fs = loopfs.Tmpfs(t, 56<<20)
			} else {
				fs = loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20}) // ~56 MB free
			}
			// 40 MiB of source: it fits the empty filesystem, not the one
			// with the ballast.
			src := filepath.Join(scratchDir(t), "src")
			for i := 0; i < 20; i++ {
				writeFile(t, filepath.Join(src, fmt.Sprintf("big/%02d", i)), pattern(int64(i), 2<<20))
			}
			for i := 0; i < 100; i++ {
				writeFile(t, filepath.Join(src, fmt.Sprintf("small/%d/%03d", i%7, i)), pattern(int64(100+i), 4096+i))
			}
			ballast := fs.Path("ballast")
			fillTo(t, ballast, 24<<20)

			dst := fs.Path("dst")
			var ev events
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
			if err == nil {
				t.Fatalf("Run succeeded on a filesystem without room for the tree (copied %d)", sum.Copied)
			}
			var full *copyengine.DestFullError
			if !errors.As(err, &full) || !errors.Is(err, copyengine.ErrSomeFailed) {
				t.Errorf("Run returned %v, want a full destination (ErrSomeFailed)", err)
			}
			if sum.Failed != 1 || len(sum.Failures) != 1 {
				t.Fatalf("Run returned %v and reports %d failed files (%v), want one: the run stops at the first", err, sum.Failed, sum.Failures)
			}
			for _, f := range sum.Failures {
				if !strings.Contains(f.Err, "no space left on device") {
					t.Errorf("failure of %s does not name the cause: %q", f.Path, f.Err)
				}
			}
			t.Logf("first run: copied %d, failed %d", sum.Copied, sum.Failed)
			noTemps(t, fs.Dir)
			if n := finalFilesMatch(t, src, dst); int64(n) != sum.Copied {
				t.Errorf("%d files under their final names, the summary says %d copied", n, sum.Copied)
			}

			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			sum2, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
			if err != nil {
				t.Fatalf("rerun after freeing space: %v (failures %v)", err, sum2.Failures)
			}
			if sum2.Skipped != sum.Copied || sum2.Copied != 120-sum.Copied {
				t.Errorf("rerun skipped %d and copied %d; want the %d in place skipped and the other %d copied",
					sum2.Skipped, sum2.Copied, sum.Copied, 120-sum.Copied)
			}
			sameTree(t, src, dst)
			noTemps(t, fs.Dir)
		})
	}
}

// fillTo creates path with size bytes of zeros, durably.
func fillTo(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for n := int64(0); n < size; n += int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			t.Fatalf("writing the ballast: %v", err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
