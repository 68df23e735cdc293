//go:build fcfault && linux

package copyengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// A FUSE driver built on libfuse's high-level API (exfat-fuse, ntfs-3g,
// fusefat) does not remove a file that is still open when its name is
// removed or renamed over: it renames it to ".fuse_hidden<node><n>" and
// removes that when the last descriptor is released. If the driver dies or
// the drive is pulled out in between, the hidden file stays on the drive.
// A run removes its temporaries only once it holds no descriptor of them.

// hidesDuring returns how many files the driver of the mount at dir hid
// while run ran. It hides a file of its own before and after (one opened,
// removed while open, closed) and reads libfuse's counter of hidden files
// from their names.
func hidesDuring(t *testing.T, dir string, run func()) int {
	t.Helper()
	before := hideCount(t, dir)
	run()
	return hideCount(t, dir) - before - 1
}

func hideCount(t *testing.T, dir string) int {
	t.Helper()
	p := filepath.Join(dir, "hide-count")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		name := n.Name()
		if strings.HasPrefix(name, ".fuse_hidden") && len(name) >= len(".fuse_hidden")+16 {
			if c, err := strconv.ParseUint(name[len(name)-8:], 16, 32); err == nil {
				return int(c)
			}
		}
	}
	t.Skipf("skipping: the driver of %s removed an open file without hiding it (hard_remove?)", dir)
	return 0
}

// openUnder returns what the descriptors of this process that lead into dir
// lead to.
func openUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("skipping the check of descriptors: %v", err)
	}
	var out []string
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && (l == dir || strings.HasPrefix(l, dir+"/")) {
			out = append(out, l)
		}
	}
	return out
}

// TestFUSENoHiddenFiles makes files fail after their read-back (a rename
// that fails) and stops a run while files wait for their read-back, on
// destinations through exfat-fuse and ntfs-3g: the run removes their
// temporaries without having the driver hide any, and holds no descriptor
// of the destination once it returns, so that nothing is left behind when
// the drive goes away.
//
// Both mount their drive as fuseblk, where the kernel has the driver
// release a file before close returns. fusefat mounts a plain FUSE
// filesystem, where the release is sent in the background after close
// returns: a temporary removed right after its close may still be hidden
// for a moment there, whatever the order of the run's calls, so it is not
// tested.
//
// Not in parallel with other tests: a process forked by another test
// (mount, mkfs, losetup) holds a copy of every descriptor of this one until
// it execs, so a file the run has closed may still be open to the driver
// when its name is removed, and be hidden for that moment.
func TestFUSENoHiddenFiles(t *testing.T) {
	src := scratchDir(t)
	manyFiles(t, src, 48, 64<<10)
	for _, typ := range []string{loopfs.ExfatFUSE, loopfs.NTFS3G} {
		t.Run(typ, func(t *testing.T) { testFUSENoHiddenFiles(t, typ, src) })
	}
}

func testFUSENoHiddenFiles(t *testing.T, typ, src string) {
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: typ, Size: 64 << 20})
	t.Run("rename fails", func(t *testing.T) {
		dst := fs.Path("renamefails")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRename, PathHas: dst, Err: syscall.EACCES})
		var sum copyengine.Summary
		var err error
		hid := hidesDuring(t, fs.Dir, func() {
			sum, err = runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1}, faults))
		})
		if !errors.Is(err, copyengine.ErrSomeFailed) || sum.Failed == 0 {
			t.Fatalf("run: %v, %d failed; want files failed by their rename", err, sum.Failed)
		}
		leftClean(t, fs.Dir, dst, hid)
	})

	t.Run("run stopped", func(t *testing.T) {
		dst := fs.Path("stopped")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var once sync.Once
		var sum copyengine.Summary
		var err error
		hid := hidesDuring(t, fs.Dir, func() {
			sum, err = copyengine.Run(ctx, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1, OnEvent: func(e copyengine.Event) {
				if e.Action == copyengine.ActCopy {
					once.Do(cancel) // files wait for their read-back, opened ahead
				}
			}})
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run: %v (copied %d); want it stopped", err, sum.Copied)
		}
		leftClean(t, fs.Dir, dst, hid)
	})

	fs.Remount()
	_ = filepath.WalkDir(fs.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".fuse_hidden") {
			t.Errorf("left on the drive: %s", p)
		}
		return nil
	})
}

// leftClean checks a run that ended on a FUSE drive mounted at dir, which
// hid hid files while the run went on: no descriptor below dir is still
// open, no file was hidden, and no temporary is left in dst.
func leftClean(t *testing.T, dir, dst string, hid int) {
	t.Helper()
	if fds := openUnder(t, dir); len(fds) != 0 {
		t.Errorf("descriptors of the destination still open after the run: %q", fds)
	}
	if hid != 0 {
		t.Errorf("the run removed %d files while it held them open: the driver hid them as .fuse_hidden files", hid)
	}
	noTemps(t, dst)
}
