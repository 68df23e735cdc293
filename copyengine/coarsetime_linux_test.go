//go:build linux

package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestCoarsetimeBackupNoLinks keeps old versions with --backup-dir on
// DEST's own filesystem where it has no hard links (exFAT through
// exfat-fuse, FAT through fusefat, both answering link(2) with EPERM):
// each version a rerun with --delete removes or a copy replaces is copied
// into the backup directory, verified, instead of failing the file, and
// the run succeeds.
func TestCoarsetimeBackupNoLinks(t *testing.T) {
	for _, typ := range []string{loopfs.ExfatFUSE, loopfs.FuseFAT} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: typ, Size: 64 << 20})
			src := filepath.Join(scratchDir(t), "src")
			old := map[string][]byte{
				"a":     pattern(81, 3000),
				"b":     pattern(82, 4000),
				"sub/c": pattern(83, 5000),
				"sub/d": pattern(84, 6000),
			}
			writeFiles(t, src, old)
			dst, bak := fs.Path("dst"), fs.Path("bak")
			if sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil {
				t.Fatalf("first run: %v (failures %v)", err, sum.Failures)
			}
			// a and sub/c are replaced (another size: changed whatever
			// the times say), b and sub/d are removed by --delete.
			writeFile(t, filepath.Join(src, "a"), pattern(91, 3500))
			writeFile(t, filepath.Join(src, "sub/c"), pattern(93, 5500))
			for _, n := range []string{"b", "sub/d"} {
				if err := os.Remove(filepath.Join(src, n)); err != nil {
					t.Fatal(err)
				}
			}
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, BackupDir: bak})
			if err != nil {
				t.Fatalf("rerun with --delete --backup-dir: %v (failures %v)", err, sum.Failures)
			}
			if sum.Failed != 0 || sum.BackedUp != 4 {
				t.Errorf("failed %d, backed up %d; want 0, 4", sum.Failed, sum.BackedUp)
			}
			for rel, want := range old {
				got, err := os.ReadFile(filepath.Join(bak, rel))
				if err != nil {
					t.Errorf("old version of %s not in the backup directory: %v", rel, err)
				} else if !bytes.Equal(got, want) {
					t.Errorf("backup of %s: %d bytes, not the old version's %d", rel, len(got), len(want))
				}
			}
			for _, n := range []string{"b", "sub/d"} {
				if _, err := os.Lstat(filepath.Join(dst, n)); !os.IsNotExist(err) {
					t.Errorf("%s still in DEST after --delete: %v", n, err)
				}
			}
			finalFilesMatch(t, src, dst)
		})
	}
}

// TestCoarsetimeRewriteSameBucket rewrites sources at the same size after
// a copy to exFAT (exfat-fuse), each given an mtime in the same
// granule of what exFAT stores as the one copied but another nanosecond
// value: size and mtime at exFAT's resolution match DEST, and only the
// source's own cache entry, whose stat they no longer have, tells they
// changed. The rerun must read them and copy them; a rerun after that,
// with nothing changed, reads nothing.
func TestCoarsetimeRewriteSameBucket(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	db := filepath.Join(t.TempDir(), "hashes.db")
	src := filepath.Join(scratchDir(t), "src")
	dst := fs.Path("dst")
	// An even second and 100 ms: 2 s, 10 ms and 1 ms granules all hold
	// it and the nanosecond after it.
	t0 := time.Unix(1700000000, 100_000_000)
	const n, size = 20, 4096
	rel := func(i int) string { return filepath.Join("d", "f"+string(rune('a'+i))) }
	for i := 0; i < n; i++ {
		p := filepath.Join(src, rel(i))
		writeFile(t, p, pattern(int64(100+i), size))
		if err := os.Chtimes(p, t0, t0); err != nil {
			t.Fatal(err)
		}
	}
	opt := copyengine.Options{Sources: []string{src}, Dest: dst}
	if sum := cachedRun(t, db, opt); sum.Copied != n {
		t.Fatalf("first run copied %d, want %d", sum.Copied, n)
	}
	t1 := t0.Add(time.Nanosecond)
	for i := 0; i < n; i += 2 {
		p := filepath.Join(src, rel(i))
		writeFile(t, p, pattern(int64(200+i), size))
		if err := os.Chtimes(p, t1, t1); err != nil {
			t.Fatal(err)
		}
	}
	sum := cachedRun(t, db, opt)
	t.Logf("rerun after the rewrite: copied %d, skipped %d, read %d bytes", sum.Copied, sum.Skipped, sum.BytesRead)
	if sum.Copied != n/2 {
		t.Errorf("rerun copied %d, want the %d rewritten", sum.Copied, n/2)
	}
	for i := 0; i < n; i++ {
		want, err := os.ReadFile(filepath.Join(src, rel(i)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dst, rel(i)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s in DEST does not hold the source's bytes after the rerun", rel(i))
		}
	}
	sum = cachedRun(t, db, opt)
	if sum.Copied != 0 || sum.Skipped != n || sum.BytesRead != 0 || sum.BytesHashed != 0 {
		t.Errorf("rerun with nothing changed: copied %d, skipped %d, read %d bytes (%d to hash); want 0, %d, 0 (0)",
			sum.Copied, sum.Skipped, sum.BytesRead, sum.BytesHashed, n)
	}
}
