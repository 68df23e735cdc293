//go:build fcfault

package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestInorenumSwapBeforePublishExfat: on exfat-fuse, whose inode numbers
// do not last, a writer in DEST replaces a temporary after its read-back,
// just before it takes its final name, while the kernel forgets inodes:
// with a file of other content, and with one of the very same bytes. Each
// must fail as replaced (exit 4), named; the other files are in place.
func TestInorenumSwapBeforePublishExfat(t *testing.T) {
	for _, same := range []bool{false, true} {
		name := map[bool]string{false: "other content", true: "same content"}[same]
		t.Run(name, func(t *testing.T) {
			fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
			stop := inorenumDropCaches(t)
			stop()
			inorenumCheckRenumbers(t, "exfat-fuse", fs.Dir)
			src := scratchDir(t)
			files := inorenumFiles(t, src, 100, 5)
			victim := filepath.Join("d3", "IMG_0003.JPG")
			dst := fs.Path("dst")
			tmp := filepath.Join(dst, "d3", ".IMG_0003.JPG"+tempSuffix)
			theirs := append([]byte(nil), files[victim]...)
			if !same {
				theirs[0] ^= 0xff
			}
			var swapErr error
			swapped := false
			// Right before the temporary is renamed onto its name, after
			// its read-back and its times: the temporary is moved aside
			// and the writer's file put under its name (exfat-fuse has no
			// RENAME_EXCHANGE).
			faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRename, PathIs: filepath.Join(dst, victim), Nth: 1, Then: func() {
				swapped = true
				if swapErr = os.Rename(tmp, tmp+".aside"); swapErr == nil {
					swapErr = os.WriteFile(tmp, theirs, 0o644)
				}
			}})
			var ev events
			stop = inorenumDropCaches(t)
			sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record}, faults))
			drops := stop()
			if !swapped || swapErr != nil {
				t.Fatalf("the swap did not happen (%v): %v", swapped, swapErr)
			}
			if !errors.Is(err, copyengine.ErrMismatch) {
				t.Errorf("run (%d cache drops): %v (want %v): the writer's file was published as verified", drops, err, copyengine.ErrMismatch)
			}
			fails := ev.failures()
			if fe := fails[victim]; fe == nil || !strings.Contains(fe.Error(), "replaced by another file") {
				t.Errorf("%s: failure %v, want it failed as replaced by another file", victim, fe)
			}
			if len(fails) != 1 {
				t.Errorf("%d failures, want only %s:\n%s", len(fails), victim, inorenumFailures(&ev))
			}
			if sum.Copied != int64(len(files)-1) {
				t.Errorf("%d copied, want %d", sum.Copied, len(files)-1)
			}
			for rel, data := range files {
				if rel == victim {
					continue
				}
				if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(got) != string(data) {
					t.Errorf("%s not in place: %v", rel, err)
				}
			}
			_ = os.Remove(tmp + ".aside")
		})
	}
}
