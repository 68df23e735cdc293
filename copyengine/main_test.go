package copyengine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// scratch is an ext4 that the tests' trees share, loop-mounted for this
// test binary where it can be (nil elsewhere). The runs flush the
// filesystem they write to; on a filesystem of their own they flush only
// their own data, and creating and removing thousands of files there does
// not wait on whatever else the machine's disk is doing.
var scratch *loopfs.FS

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if err := loopfs.Available("ext4"); err != nil {
		fmt.Fprintf(os.Stderr, "copyengine tests: trees in the default temporary directory: %v\n", err)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "fastcopy-scratch-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Sparse: the image takes only what the tests write, at most a few GiB
	// at a time (each test removes its trees).
	fs, err := loopfs.Attach(loopfs.Config{Type: "ext4", Size: 16 << 30}, filepath.Join(dir, "scratch.img"), mnt)
	if err != nil {
		fmt.Fprintf(os.Stderr, "copyengine tests: trees in the default temporary directory: %v\n", err)
		return m.Run()
	}
	scratch = fs
	code := m.Run()
	if err := fs.Detach(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// scratchDir returns a new empty directory on the scratch filesystem, or
// t.TempDir() where there is none; the test's cleanup removes it.
func scratchDir(t *testing.T) string {
	t.Helper()
	if scratch == nil {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(scratch.Dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}
