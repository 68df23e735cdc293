//go:build fcfault

package fileio_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestFaultsAllCount checks the fault seam itself: a fault that only
// counts neither hides a later fault for the same call nor is hidden by
// one, and every fault that applies runs its Then.
func TestFaultsAllCount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"victim", "other"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	count := &fileio.Fault{Op: fileio.OpOpen}
	thens := 0
	watch := &fileio.Fault{Op: fileio.OpOpen, PathHas: "victim", Then: func() { thens++ }}
	fail := &fileio.Fault{Op: fileio.OpOpen, PathHas: "victim", Err: syscall.EIO}
	after := &fileio.Fault{Op: fileio.OpOpen}
	d := openFaulty(t, dir, fileio.NewFaultSet(count, watch, fail, after))

	if f, err := d.Open("victim", false); !errors.Is(err, syscall.EIO) {
		if f != nil {
			f.Close()
		}
		t.Errorf("open victim: %v; want the injected EIO behind a counting fault", err)
	}
	f, err := d.Open("other", false)
	if err != nil {
		t.Fatalf("open other: %v", err)
	}
	f.Close()
	if count.Calls() != 2 || after.Calls() != 2 || fail.Calls() != 1 || watch.Calls() != 1 {
		t.Errorf("calls counted: %d, %d (before and after the failing fault), %d, %d; want 2, 2, 1, 1",
			count.Calls(), after.Calls(), fail.Calls(), watch.Calls())
	}
	if thens != 1 {
		t.Errorf("Then ran %d times, want 1", thens)
	}
}

// openFaulty opens dir as a root of a run with the faults s.
func openFaulty(t *testing.T, dir string, s *fileio.FaultSet) *fileio.Dir {
	t.Helper()
	d, err := fileio.OpenDirFaults(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestFaultSetPerRun: a fault set reaches what is opened from the root it
// was given to, through subdirectories, files and nodes, and nothing
// opened from another root, even of the same directory.
func TestFaultSetPerRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "victim"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := &fileio.Fault{Op: fileio.OpRead, PathHas: "victim", Err: syscall.EIO}
	sync := &fileio.Fault{Op: fileio.OpSync, PathHas: "victim", Err: syscall.EIO}
	faulty := openFaulty(t, dir, fileio.NewFaultSet(read, sync))
	plain, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	other := openFaulty(t, dir, fileio.NewFaultSet())

	for _, c := range []struct {
		name string
		root *fileio.Dir
		want error
	}{{"the run's root", faulty, syscall.EIO}, {"a root of no run", plain, nil}, {"another run's root", other, nil}} {
		sub, err := c.root.OpenBeneath("sub")
		if err != nil {
			t.Fatal(err)
		}
		f, err := sub.Open("victim", false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.ReadAt(make([]byte, 4), 0); !errors.Is(err, c.want) {
			t.Errorf("%s: read: %v, want %v", c.name, err, c.want)
		}
		if err := f.Sync(); !errors.Is(err, c.want) {
			t.Errorf("%s: sync: %v, want %v", c.name, err, c.want)
		}
		f.Close()
		sub.Close()
	}
	if read.Calls() != 1 || sync.Calls() != 1 {
		t.Errorf("calls counted: read %d, sync %d; want 1 each, of the run's root alone", read.Calls(), sync.Calls())
	}
}

// TestFaultNthConcurrent: of calls made at once, exactly one is the Nth.
func TestFaultNthConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	nth := &fileio.Fault{Op: fileio.OpOpen, Nth: 7, Err: syscall.EIO}
	d := openFaulty(t, dir, fileio.NewFaultSet(nth))
	const n = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := d.Open("f", false)
			if err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
				return
			}
			f.Close()
		}()
	}
	wg.Wait()
	if failed != 1 || nth.Calls() != n {
		t.Errorf("%d of %d opens failed, %d counted; want 1 failed, %d counted", failed, n, nth.Calls(), n)
	}
}
