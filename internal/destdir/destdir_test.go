package destdir

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

func TestEnsure(t *testing.T) {
	root := t.TempDir()
	d, err := fileio.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if created, _, err := Ensure(d, "a", "/src/a"); err != nil || !created {
		t.Fatalf("new directory: created %v, %v", created, err)
	}
	created, st, err := Ensure(d, "a", "/src/a")
	if err != nil || created || !st.IsDir() {
		t.Fatalf("existing directory: created %v, dir %v, %v", created, st.IsDir(), err)
	}
	if err := os.WriteFile(filepath.Join(root, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ensure(d, "f", "/src/f"); err == nil || !strings.Contains(err.Error(), `"/src/f" is a directory`) {
		t.Fatalf("a file in the way: %v", err)
	}
	if runtime.GOOS == "windows" {
		t.Log("Writable is not checked: Windows has no POSIX mode bits to make a directory writable by")
		return
	}
	if err := os.Chmod(filepath.Join(root, "a"), 0o500); err != nil {
		t.Fatal(err)
	}
	st, _ = d.Lstat("a")
	Writable(d, "a", st, false)
	if fi, err := os.Stat(filepath.Join(root, "a")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("read-only directory left as %v (%v)", fi.Mode().Perm(), err)
	}
}
