//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestSourceDriverKilled kills the driver of the source (exfat-fuse: a
// camera card) as the 40th source file is read: the run stops with one
// error that names the source, fails no file one by one, and what it had
// placed in the destination is in place and whole.
func TestSourceDriverKilled(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.ExfatFUSE, Size: 128 << 20})
	manyFiles(t, fs.Path("card"), 200, 64<<10)
	fs.Remount() // read from the image, not from the page cache
	src := fs.Path("card")
	dst := filepath.Join(scratchDir(t), "dst")
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathHas: src + "/", Nth: 40, Then: func() {
		if err := fs.Kill(); err != nil {
			t.Errorf("killing the driver: %v", err)
		}
	}})
	var ev events
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 2, OnEvent: ev.record}, faults))
	var gone *copyengine.DriveGoneError
	if !errors.As(err, &gone) {
		t.Fatalf("run: %v, want the source gone (failed %d: %v)", err, sum.Failed, sum.Failures)
	}
	t.Logf("error: %v", err)
	if gone.Side != "source" || gone.Root != src {
		t.Errorf("gone: %s %q, want the source %q", gone.Side, gone.Root, src)
	}
	if sum.Failed != 0 || len(ev.failures()) != 0 {
		t.Errorf("%d failures reported one by one: %v", sum.Failed, sum.Failures)
	}
	fs.Remount()
	n := finalFilesMatch(t, src, dst)
	if int64(n) != sum.Copied || gone.Kept != sum.Copied {
		t.Errorf("%d files in place, the summary says %d copied, the error %d kept", n, sum.Copied, gone.Kept)
	}
	noTemps(t, dst)
}

// TestDriveGoneFaults: ENOTCONN from the destination stops the run at once
// although its root still answers (a FUSE mount below it, say), and EIO on
// every source file stops it after a streak; a single EIO fails its file
// alone.
func TestDriveGoneFaults(t *testing.T) {
	t.Parallel()
	t.Run("ENOTCONN", func(t *testing.T) {
		src := filepath.Join(scratchDir(t), "src")
		manyFiles(t, src, 100, 1000)
		dst := filepath.Join(scratchDir(t), "dst")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpCreate, PathHas: dst + "/", Err: syscall.ENOTCONN})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
		var gone *copyengine.DriveGoneError
		if !errors.As(err, &gone) || gone.Side != "destination" {
			t.Fatalf("run: %v, want the destination gone (failed %d)", err, sum.Failed)
		}
		if sum.Failed != 0 {
			t.Errorf("%d failures reported one by one", sum.Failed)
		}
	})
	t.Run("EIO streak", func(t *testing.T) {
		src := filepath.Join(scratchDir(t), "src")
		manyFiles(t, src, 100, 1000)
		dst := filepath.Join(scratchDir(t), "dst")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathHas: src + "/", Err: syscall.EIO})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Retries: -1, Jobs: 1}, faults))
		var gone *copyengine.DriveGoneError
		if !errors.As(err, &gone) || gone.Side != "source" || !strings.Contains(err.Error(), "in a row") {
			t.Fatalf("run: %v, want the source gone after a streak (failed %d)", err, sum.Failed)
		}
		if sum.Failed >= 16 {
			t.Errorf("%d failures reported one by one, want fewer than the streak", sum.Failed)
		}
	})
	t.Run("EIO from mknod", func(t *testing.T) {
		// exfat-fuse answers every mknod with EIO: a tree of FIFOs fails
		// each one, and is not a dead drive.
		src := filepath.Join(scratchDir(t), "src")
		manyFiles(t, src, 10, 100)
		for i := 0; i < 40; i++ {
			if err := syscall.Mkfifo(filepath.Join(src, "p"+strconv.Itoa(i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dst := filepath.Join(scratchDir(t), "dst")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpCreate, PathHas: dst + "/.p", Err: syscall.EIO})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1}, faults))
		if err != copyengine.ErrSomeFailed || sum.Failed != 40 || sum.Copied != 10 {
			t.Fatalf("run: %v, failed %d, copied %d; want the 40 FIFOs failed and the files copied", err, sum.Failed, sum.Copied)
		}
	})
	t.Run("one EIO", func(t *testing.T) {
		src, _ := faultTree(t)
		dst := filepath.Join(scratchDir(t), "dst")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "victim"), Err: syscall.EIO})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Retries: -1}, faults))
		if err != copyengine.ErrSomeFailed {
			t.Fatalf("run: %v, want the victim alone failed", err)
		}
		onlyVictimFailed(t, src, dst, sum, "input/output error")
	})
}
