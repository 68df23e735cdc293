package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestHashFileSparse checks that a file with holes hashes as its full
// logical content, holes as zeros: never a size-only shortcut.
func TestHashFileSparse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	logical := make([]byte, size)
	for _, off := range []int64{0, 10 << 20, size - 5} {
		island := []byte("data island")
		if off+int64(len(island)) > size {
			island = island[:size-off]
		}
		copy(logical[off:], island)
		if _, err := f.WriteAt(island, off); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	d, err := fileio.OpenDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, _ := d.Lstat("sparse")
	if !st.Sparse() {
		t.Skip("this filesystem allocated the holes; nothing sparse to test")
	}
	ff, err := d.Open("sparse", false)
	if err != nil {
		t.Fatal(err)
	}
	defer ff.Close()
	buf := make([]byte, BufSize)
	got, n, err := HashFile(ff, st.Size, true, buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != size || got != Bytes(logical) {
		t.Fatalf("sparse hash %s over %d bytes, want %s over %d", Hex(got), n, Hex(Bytes(logical)), size)
	}
	// A changed byte inside a data island changes the digest.
	logical[10<<20] ^= 1
	if got == Bytes(logical) {
		t.Fatal("digest does not depend on the data")
	}
}
