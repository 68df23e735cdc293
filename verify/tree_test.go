package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if len(content) > 2 && content[:2] == "->" {
			if err := os.Symlink(content[2:], p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func kinds(r Report) map[string]string {
	m := map[string]string{}
	for _, d := range r.Diffs {
		m[d.Path] = d.Kind
	}
	return m
}

func TestCompareTrees(t *testing.T) {
	t.Parallel()
	base := map[string]string{"a": "same", "d/b": "same too", "l": "->a", "gone": "x", "t": "file"}
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, base)
	writeTree(t, dst, map[string]string{"a": "same", "d/b": "same to0", "l": "->d/b", "extra": "y", "t/x": "dir now"})
	r, err := CompareTrees(context.Background(), src, dst, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"d/b": Differ, "l": Differ, "gone": Missing, "extra": Extra, "t": TypeDiff, "t/x": Extra}
	got := kinds(r)
	for p, k := range want {
		if got[p] != k {
			t.Errorf("%q: got %q, want %q (all: %v)", p, got[p], k, got)
		}
	}
	if len(got) != len(want) || r.OK() {
		t.Errorf("differences %v, want exactly %v", got, want)
	}

	same := t.TempDir()
	writeTree(t, same, base)
	r, err = CompareTrees(context.Background(), src, same, TreeOptions{})
	if err != nil || !r.OK() || r.Files != 4 {
		t.Fatalf("identical trees: %+v, %v", r, err)
	}
}

func TestCheckManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "one", "sub/b": "two", "unlisted": "three"})
	entries := []ManifestEntry{
		{Sum: Bytes([]byte("one")), Path: "a"},
		{Sum: Bytes([]byte("TWO")), Path: "sub/b"},
		{Sum: Bytes([]byte("four")), Path: "missing"},
	}
	r, err := CheckManifest(context.Background(), entries, dir, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := kinds(r)
	if got["sub/b"] != Differ || got["missing"] != Missing || len(got) != 2 {
		t.Errorf("differences %v", got)
	}
	if r.Extra != 1 {
		t.Errorf("extra = %d, want 1 (unlisted files are counted, not failed)", r.Extra)
	}
}

// TestHashFileSparse checks that a file with holes hashes as its full
// logical content, holes as zeros: never a size-only shortcut.
func TestHashFileSparse(t *testing.T) {
	t.Parallel()
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
