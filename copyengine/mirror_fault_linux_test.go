//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestDeleteKeepsExtrasWhereAFileFailed: a source file that cannot be read
// fails, and the directory it is in keeps what the source lacks (said in
// DeleteKept); a directory where nothing failed is mirrored.
func TestDeleteKeepsExtrasWhereAFileFailed(t *testing.T) {
	src, dst, _ := mirrorFixture(t)
	writeFile(t, filepath.Join(src, "sub", "changed"), pattern(20, 5000))
	settleSources()
	eio := &fileio.Fault{Op: fileio.OpRead, PathHas: "/sub/changed", Err: syscall.EIO}
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, Retries: -1}, fileio.NewFaultSet(eio)))
	if eio.Calls() == 0 {
		t.Fatal("the read fault was never reached")
	}
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatalf("Run returned %v, want ErrSomeFailed", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "sub", "old2")); err != nil {
		t.Errorf("sub/old2 was removed though a file in sub failed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "old")); !os.IsNotExist(err) {
		t.Errorf("old, in a directory where nothing failed, is still there (%v)", err)
	}
	if len(sum.DeleteKept) != 1 || !strings.HasPrefix(sum.DeleteKept[0], `"sub"`) {
		t.Errorf("DeleteKept = %q, want sub named", sum.DeleteKept)
	}
}

// TestDeleteSymlinkSwap: a writer of DEST exchanges a directory that
// --delete empties with a symlink to a directory outside DEST
// (renameat2(RENAME_EXCHANGE)), right before the run opens it (to plan,
// then to remove) and right before it removes the first entry in it.
// Nothing outside DEST may be removed.
func TestDeleteSymlinkSwap(t *testing.T) {
	for _, at := range []struct {
		op  fileio.Op
		has string
		nth int
	}{
		{fileio.OpOpenDir, "/dst/olddir", 1}, // planning
		{fileio.OpOpenDir, "/dst/olddir", 3}, // removing (plan opened olddir and olddir/in)
		{fileio.OpRemove, "/olddir/g", 1},
		{fileio.OpRemove, "/olddir/in/f", 1},
	} {
		t.Run(string(at.op)+strings.ReplaceAll(at.has, "/", "_"), func(t *testing.T) {
			src, dst, outside := mirrorFixture(t)
			// Outside, the names --delete removes in olddir.
			writeFile(t, filepath.Join(outside, "in", "f"), []byte("outside"))
			writeFile(t, filepath.Join(outside, "g"), []byte("outside"))
			if err := os.Symlink(outside, filepath.Join(dst, "evil.keep")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, outside)
			swaps := 0
			swap := &fileio.Fault{Op: at.op, PathHas: at.has, Nth: at.nth, Then: func() {
				swaps++
				if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(dst, "olddir"), unix.AT_FDCWD, filepath.Join(dst, "evil.keep"), unix.RENAME_EXCHANGE); err != nil {
					t.Error(err)
				}
			}}
			// The symlink is excluded, so that it is there to exchange
			// with at every point of the run.
			_, _ = runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, Excludes: []string{"*.keep"}}, fileio.NewFaultSet(swap)))
			if swaps != 1 {
				t.Fatalf("the exchange was made %d times, want once", swaps)
			}
			untouched(t, outside, before)
			if _, err := os.Lstat(filepath.Join(dst, "old")); !os.IsNotExist(err) {
				t.Errorf("old was not removed (%v)", err)
			}
		})
	}
}

// TestMoveKeepsChangedSource: a source file written to after it was read
// (here: as its copy is renamed into place) is not removed by --move: it
// fails, named, and stays; the others are moved.
func TestMoveKeepsChangedSource(t *testing.T) {
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	writeFile(t, filepath.Join(src, "a"), pattern(21, 4000))
	writeFile(t, filepath.Join(src, "b"), pattern(22, 4000))
	settleSources()
	grow := &fileio.Fault{Op: fileio.OpRename, PathHas: "/dst/b", Nth: 1, Then: func() {
		f, err := os.OpenFile(filepath.Join(src, "b"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = f.WriteString("more")
		f.Close()
	}}
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Move: true}, fileio.NewFaultSet(grow)))
	if grow.Calls() == 0 {
		t.Fatal("the fault that grows b was never reached")
	}
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatalf("Run returned %v, want ErrSomeFailed", err)
	}
	if len(sum.Failures) != 1 || sum.Failures[0].Path != "b" || !strings.Contains(sum.Failures[0].Err, "changed") {
		t.Errorf("failures %v, want b, changed", sum.Failures)
	}
	if got, err := os.ReadFile(filepath.Join(src, "b")); err != nil || !strings.HasSuffix(string(got), "more") {
		t.Errorf("the changed source b was not kept as written: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(src, "a")); !os.IsNotExist(err) {
		t.Errorf("a was not moved (%v)", err)
	}
}
