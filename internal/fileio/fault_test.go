//go:build fcfault

package fileio_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestFaultsAllCount checks the fault seam itself: a fault that only
// counts neither hides a later fault for the same call nor is hidden by
// one, and every fault that applies runs its Then.
func TestFaultsAllCount(t *testing.T) {
	d, dir := openRoot(t)
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
	fileio.SetFaults(count, watch, fail, after)
	defer fileio.ClearFaults()

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
