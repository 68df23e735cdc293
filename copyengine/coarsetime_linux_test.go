//go:build linux

package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
