package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// killAfter returns an OnEvent that records events and kills fs's driver
// (SIGKILL, by its PID) once n files have been placed.
func killAfter(t *testing.T, fs *loopfs.FUSEFS, n int, ev *events) func(copyengine.Event) {
	var once sync.Once
	placed := 0
	var mu sync.Mutex
	return func(e copyengine.Event) {
		ev.record(e)
		if e.Action != copyengine.ActCopy {
			return
		}
		mu.Lock()
		placed++
		now := placed >= n
		mu.Unlock()
		if now {
			once.Do(func() {
				if err := fs.Kill(); err != nil {
					t.Errorf("killing the driver: %v", err)
				}
			})
		}
	}
}

// manyFiles writes n files of size bytes in a few directories.
func manyFiles(t *testing.T, root string, n, size int) {
	for i := 0; i < n; i++ {
		writeFile(t, filepath.Join(root, "d"+strconv.Itoa(i%4), "f"+strconv.Itoa(i)), pattern(int64(i), size))
	}
}

// placedFiles returns the paths of the files the events say were placed.
func placedFiles(ev *events) []string {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var out []string
	for _, e := range ev.all {
		if e.Action == copyengine.ActCopy {
			out = append(out, e.Path)
		}
	}
	return out
}

// TestDestDriverKilled kills the exfat-fuse driver of the destination
// during a run: the run stops with one error that names the destination
// (exit 1 on the command line), fails no file one by one, and keeps what it
// had placed: after a remount those files are there and whole, and the next
// run completes the copy.
func TestDestDriverKilled(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.ExfatFUSE, Size: 128 << 20})
	src := scratchDir(t)
	manyFiles(t, src, 400, 64<<10)
	dst := fs.Path("copy")
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 2, OnEvent: killAfter(t, fs, 40, &ev)})
	var gone *copyengine.DriveGoneError
	if !errors.As(err, &gone) {
		t.Fatalf("run: %v, want the destination gone (failed %d: %v)", err, sum.Failed, sum.Failures)
	}
	t.Logf("error: %v", err)
	if gone.Side != "destination" || gone.Root != dst {
		t.Errorf("gone: %s %q, want the destination %q", gone.Side, gone.Root, dst)
	}
	if sum.Failed != 0 || len(ev.failures()) != 0 {
		t.Errorf("%d failures reported one by one: %v", sum.Failed, sum.Failures)
	}
	placed := placedFiles(&ev)
	if int64(len(placed)) != sum.Copied || gone.Kept != sum.Copied {
		t.Errorf("placed %d, summary copied %d, error says %d kept", len(placed), sum.Copied, gone.Kept)
	}
	fs.Remount()
	for _, rel := range placed {
		want, _ := os.ReadFile(filepath.Join(src, rel))
		got, err := os.ReadFile(filepath.Join(dst, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s was placed before the driver died; after a remount: %d of %d bytes, %v", rel, len(got), len(want), err)
		}
	}
	sum, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
	if err != nil {
		t.Fatalf("rerun after the remount: %v (%v)", err, sum.Failures)
	}
	fs.Remount()
	sameTree(t, src, dst)
	noTemps(t, fs.Dir)
}

// TestDestUnmountedLazily unmounts the destination lazily (umount -l)
// during a run: the writes go on through the descriptors and nothing
// fails, but the files are no longer under the destination's path. The run
// says so (exit 1) instead of reporting success.
func TestDestUnmountedLazily(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to mount a tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("skipping: cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	src := scratchDir(t)
	manyFiles(t, src, 100, 4096)
	var once sync.Once
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: mnt, OnEvent: func(e copyengine.Event) {
		if e.Action == copyengine.ActMkdir {
			once.Do(func() {
				if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
					t.Errorf("umount -l: %v: %s", err, out)
				}
			})
		}
	}})
	var gone *copyengine.DriveGoneError
	if !errors.As(err, &gone) || gone.Side != "destination" {
		t.Fatalf("run: %v (copied %d, failed %d), want the destination gone", err, sum.Copied, sum.Failed)
	}
	t.Logf("error: %v", err)
}
