//go:build fcfault && linux

package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestFaultHoleMapLies makes SEEK_DATA report no data where there is some,
// as filesystems have done (OpenZFS #15526): on a sparse source, on one
// on compressed btrfs, and on the copy of a sparse file as it is read
// back. No digest is computed through the hole map, so the copy holds the
// source's data, verified, and the source's holes stay holes. Trusting
// the map, a source that hid its data gave a zero-filled copy that
// verified, exit 0; a copy that hid its data failed its read-back.
func TestFaultHoleMapLies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		fs         func(t *testing.T) (src, dst string)
		data       []byte
		onReadBack bool
	}{
		{"sparse source", scratchPair, pattern(81, 200<<10), false},
		{"sparse copy read back", scratchPair, pattern(83, 200<<10), true},
		{"sparse source on compressed btrfs", func(t *testing.T) (string, string) {
			fs := loopfs.Mount(t, loopfs.Config{Type: "btrfs", Size: 200 << 20, Options: []string{"compress=zstd"}})
			return fs.Path("src"), fs.Path("dst")
		}, bytes.Repeat([]byte("a file of text, which compresses well\n"), 6000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := tc.fs(t)
			f := filepath.Join(src, "sparse")
			writeFile(t, filepath.Join(src, "other"), pattern(80, 1000))
			writeIsland(t, f, 1<<20, tc.data, 3<<20+5)
			syncFile(t, f)
			if st := statOf(t, f); !st.Sparse() {
				t.Skipf("skipping: the filesystem of %s does not keep holes (%d blocks for %d bytes)", src, st.Blocks, st.Size)
			}
			lie := &fileio.Fault{Op: fileio.OpSeekData, PathIs: f, Err: syscall.ENXIO}
			if tc.onReadBack {
				lie = &fileio.Fault{Op: fileio.OpSeekData, PathHas: dst, Err: syscall.ENXIO}
			}
			checkLyingMap(t, src, dst, lie)
			// Blocks of zeros in a sparse source are not written: the copy
			// keeps its holes, found from the bytes read.
			if st := statOf(t, filepath.Join(dst, "sparse")); st.Blocks*512 > int64(len(tc.data))+128<<10 {
				t.Errorf("the copy has %d bytes allocated for %d bytes of data: its holes were filled", st.Blocks*512, len(tc.data))
			}
		})
	}
}

func scratchPair(t *testing.T) (src, dst string) {
	return filepath.Join(scratchDir(t), "src"), filepath.Join(scratchDir(t), "dst")
}

// checkLyingMap copies src to dst with lie active and checks that every
// file of the copy equals its source and that the run succeeded.
func checkLyingMap(t *testing.T, src, dst string, lie *fileio.Fault) {
	t.Helper()
	faults := fileio.NewFaultSet(lie)
	// --reflink never: a clone would carry the data whatever the map says.
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever}, faults))
	if err != nil {
		t.Errorf("Run: %v (failures %v)", err, sum.Failures)
	}
	n := finalFilesMatch(t, src, dst)
	if n == 0 || sum.Verified != int64(n) {
		t.Errorf("%d files in place, %d verified; want every file copied and read back", n, sum.Verified)
	}
	t.Logf("the lying map was asked %d times", lie.Calls())
}

// writeIsland writes a file of size bytes holding data at off and holes
// elsewhere.
func writeIsland(t *testing.T, path string, off int64, data []byte, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err == nil {
		_, err = f.WriteAt(data, off)
	}
	if err == nil {
		err = f.Truncate(size)
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// syncFile flushes path, so that a compressing filesystem has compressed
// what was written before its blocks are counted.
func syncFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
