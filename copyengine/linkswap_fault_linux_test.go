//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// A writer of the destination can exchange the temporary of a new symlink,
// FIFO, socket or device with a hard link to an object outside the
// destination: no symlink is then followed, but the object acted on by
// name, or opened, is the outside one. These tests make that exchange at
// fixed points of the run (a fault that only calls Then) and check that
// the object outside keeps its owner, mode and times, and that the entry
// fails rather than the outside object taking its name.

// outsideLinked makes the object outside the destination (with mk, owned
// by root, mode 0600, dated 2020) and its hard link evil inside it, and
// returns a check that it is still as made.
func outsideLinked(t *testing.T, outside, evil string, mk func(string) error) (check func() bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(outside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mk(outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o600); err != nil {
		t.Fatal(err)
	}
	ts := []unix.Timespec{{Sec: 1580601600}, {Sec: 1580601600}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, outside, ts, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, evil); err != nil {
		t.Fatal(err)
	}
	var before syscall.Stat_t
	if err := syscall.Lstat(outside, &before); err != nil {
		t.Fatal(err)
	}
	return func() bool {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Lstat(outside, &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode != before.Mode || st.Uid != before.Uid || st.Gid != before.Gid || st.Mtim != before.Mtim {
			t.Errorf("the run changed the object outside the destination: mode %o -> %o, owner %d:%d -> %d:%d, mtime %v -> %v",
				before.Mode&0o7777, st.Mode&0o7777, before.Uid, before.Gid, st.Uid, st.Gid, before.Mtim, st.Mtim)
			return false
		}
		return true
	}
}

// TestSymlinkTempHardLinked: the temporary of a new symlink is exchanged
// with a hard link to a file outside the destination, once right before
// the run opens the symlink to set its metadata through the descriptor
// (code that sets it by name has no such point, and is hit by the second
// case too) and once right before its rename. The outside file must keep its owner and times, the
// symlink's name must not end up holding it unseen: the entry must fail,
// named.
func TestSymlinkTempHardLinked(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (the symlink is given another owner, as only root can)")
	}
	for _, at := range []fileio.Op{fileio.OpOpen, fileio.OpRename} {
		t.Run(string(at), func(t *testing.T) {
			scr := scratchDir(t)
			src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
			for _, d := range []string{src, dst} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("/nonexistent/target", filepath.Join(src, "l")); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(filepath.Join(src, "l"), 65534, 65534); err != nil {
				t.Fatal(err)
			}
			evil := filepath.Join(dst, ".evil")
			untouched := outsideLinked(t, filepath.Join(scr, "outside", "secret"), evil, func(p string) error {
				return os.WriteFile(p, []byte("outside the destination"), 0o600)
			})
			tmp := filepath.Join(dst, ".l"+tempSuffix)
			path := tmp
			if at == fileio.OpRename {
				path = filepath.Join(dst, "l") // a rename names its target
			}
			swapped := 0
			swap := &fileio.Fault{Op: at, PathIs: path, Then: func() {
				if swapped == 0 && exchange(tmp, evil) == nil {
					swapped++
				}
			}}
			var ev events
			_, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, OnEvent: ev.record}, fileio.NewFaultSet(swap)))
			if swap.Calls() == 0 {
				t.Fatalf("no %s of %s matched the fault: it did not reach the run", at, path)
			}
			if at == fileio.OpRename && swapped == 0 {
				t.Fatal("the temporary was never exchanged")
			}
			untouched()
			if st, lerr := os.Lstat(filepath.Join(dst, "l")); lerr == nil && st.Mode()&os.ModeSymlink == 0 {
				if _, failed := ev.failures()["l"]; !failed {
					t.Errorf("l in the destination is a %v, the file outside the destination, and was not reported as failed (run: %v)", st.Mode(), err)
				}
			}
			if swapped > 0 {
				if !errors.Is(err, copyengine.ErrSomeFailed) {
					t.Errorf("run: %v (want %v)", err, copyengine.ErrSomeFailed)
				}
				if _, ok := ev.failures()["l"]; !ok {
					t.Errorf("l was not reported as failed (failures: %v)", ev.failures())
				}
			}
		})
	}
}

// TestFIFOTempHardLinked: the temporary of a new FIFO is exchanged, right
// before the run opens it to set its metadata, with a hard link to a FIFO
// outside the destination. The outside FIFO must keep its owner, mode and
// times, and the entry must fail, named.
func TestFIFOTempHardLinked(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (the FIFO is given another owner, as only root can)")
	}
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	for _, d := range []string{src, dst} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(src, "p"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "p"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(filepath.Join(src, "p"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(dst, ".evil")
	untouched := outsideLinked(t, filepath.Join(scr, "outside", "fifo"), evil, func(p string) error { return unix.Mkfifo(p, 0o600) })
	tmp := filepath.Join(dst, ".p"+tempSuffix)
	swapped := 0
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpOpen, PathIs: tmp, Then: func() {
		if swapped == 0 && exchange(tmp, evil) == nil {
			swapped++
		}
	}})
	var ev events
	_, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, OnEvent: ev.record}, faults))
	if swapped == 0 {
		t.Fatal("the temporary was never exchanged")
	}
	untouched()
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Errorf("run: %v (want %v)", err, copyengine.ErrSomeFailed)
	}
	if _, ok := ev.failures()["p"]; !ok {
		t.Errorf("p was not reported as failed (failures: %v)", ev.failures())
	}
	var st syscall.Stat_t
	if syscall.Lstat(filepath.Join(dst, "p"), &st) == nil && st.Nlink > 1 {
		t.Errorf("p in the destination is the FIFO outside it (%d links)", st.Nlink)
	}
}
