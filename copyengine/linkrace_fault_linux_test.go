//go:build fcfault && linux

package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestLinkFollowerLeaderSwapped: a source file a has a second name b. Once
// a is in place and verified, a writer of the destination puts a hard link
// to a file outside the destination under a's name, right before b is
// linked to it (at the link), or puts one under b's temporary right before
// it is renamed onto b. b must never become that outside file unnoticed:
// it fails, named, as not verified (exit 4).
func TestLinkFollowerLeaderSwapped(t *testing.T) {
	t.Parallel()
	for _, at := range []fileio.Op{fileio.OpLink, fileio.OpRename} {
		t.Run(string(at), func(t *testing.T) {
			scr := scratchDir(t)
			src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
			data := pattern(7, 100000)
			writeFile(t, filepath.Join(src, "a"), data)
			if err := os.Link(filepath.Join(src, "a"), filepath.Join(src, "b")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(src, "c"), pattern(8, 1000))
			secret := filepath.Join(scr, "outside", "secret")
			writeFile(t, secret, []byte("outside the destination"))
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			evil := filepath.Join(dst, ".evil")
			victim, path := filepath.Join(dst, "a"), filepath.Join(dst, ".b"+tempSuffix)
			if at == fileio.OpRename {
				victim, path = filepath.Join(dst, ".b"+tempSuffix), filepath.Join(dst, "b")
			}
			swapped := 0
			faults := fileio.NewFaultSet(&fileio.Fault{Op: at, PathIs: path, Then: func() {
				if swapped > 0 {
					return
				}
				_ = os.Remove(evil)
				if os.Link(secret, evil) == nil && os.Rename(evil, victim) == nil {
					swapped++
				}
			}})
			var ev events
			_, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, OnEvent: ev.record}, faults))
			if swapped == 0 {
				t.Fatal("the swap never happened")
			}
			var out, b syscall.Stat_t
			if err := syscall.Stat(secret, &out); err != nil {
				t.Fatal(err)
			}
			bErr := syscall.Lstat(filepath.Join(dst, "b"), &b)
			_, failed := ev.failures()["b"]
			if bErr == nil && b.Ino == out.Ino && !failed {
				t.Errorf("b in the destination is the file outside it, and was not reported as failed (run: %v)", err)
			}
			if got, rerr := os.ReadFile(filepath.Join(dst, "b")); rerr == nil && !bytes.Equal(got, data) && !failed {
				t.Errorf("b in the destination holds %q, and was not reported as failed", got[:min(len(got), 30)])
			}
			if !failed {
				t.Errorf("b was not reported as failed (failures: %v)", ev.failures())
			}
			if !errors.Is(err, copyengine.ErrMismatch) {
				t.Errorf("run: %v (want %v)", err, copyengine.ErrMismatch)
			}
		})
	}
}
