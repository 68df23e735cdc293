package destlock

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// A run into a directory below, at or above a locked destination is
// refused with ErrLocked, holding nothing; once the first run releases its
// locks, the same requests succeed. Make refuses to create a destination
// below a locked one, and creates nothing there.
func TestNested(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows locks the destination alone (no shared form)")
	}
	root := t.TempDir()
	dest := filepath.Join(root, "a", "dest")
	if err := os.MkdirAll(filepath.Join(dest, "below"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, release, err := Make(dest, fileio.OpenDir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rel, err := Lock(d, dest, 0)
	if err != nil {
		t.Fatal(err)
	}
	release()
	for _, other := range []string{dest, filepath.Join(dest, "below"), filepath.Join(root, "a")} {
		od, err := fileio.OpenDir(other)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := Lock(od, other, 0); !errors.Is(err, refusal.ErrLocked) {
			if r != nil {
				r()
			}
			t.Errorf("a second run into %q: %v, want ErrLocked", other, err)
		}
		od.Close()
	}
	missing := filepath.Join(dest, "below", "new", "deeper")
	if md, r, err := Make(missing, fileio.OpenDir); !errors.Is(err, refusal.ErrLocked) {
		if md != nil {
			md.Close()
			r()
		}
		t.Errorf("Make below a locked destination: %v, want ErrLocked", err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "below", "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Make created %q: %v", filepath.Join(dest, "below", "new"), err)
	}
	rel()
	d.Close()
	od, err := fileio.OpenDir(filepath.Join(dest, "below"))
	if err != nil {
		t.Fatal(err)
	}
	defer od.Close()
	r, err := Lock(od, filepath.Join(dest, "below"), 0)
	if err != nil {
		t.Fatalf("after the first run let go: %v", err)
	}
	r()
}
