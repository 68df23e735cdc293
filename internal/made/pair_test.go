//go:build !windows

package made

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestPair: a source file's recorded leftover temporary is kept to take
// up, another recorded one is a leftover to remove, one the record does
// not name is the user's, and the source's names get their stat.
func TestPair(t *testing.T) {
	root := t.TempDir()
	d, err := fileio.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := Load(Config{Root: d, Path: root, UID: fileio.Geteuid()})
	for _, n := range []string{".a.tmp", ".gone.tmp"} {
		m.Before("", n, false)
		if err := os.WriteFile(filepath.Join(root, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		m.After(d, "", n, nil, nil)
	}
	for _, n := range []string{"a", ".user.tmp"} {
		if err := os.WriteFile(filepath.Join(root, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	listing, err := d.ReadDir()
	if err != nil {
		t.Fatal(err)
	}
	src := []fileio.DirEntry{{Name: "a", Type: fileio.ModeRegular}}
	f := m.Pair(Pair{
		Dir: d, Listing: listing, Src: src, DstNames: []string{"a"},
		Temp:   func(n string) string { return "." + n + ".tmp" },
		IsTemp: func(n string) bool { return strings.HasSuffix(n, ".tmp") },
		Resume: true,
	})
	if _, ok := f.Stats["a"]; !ok || len(f.Stats) != 1 {
		t.Fatalf("stats %v, want a's", f.Stats)
	}
	if f.Kept["a"] != ".a.tmp" || len(f.Kept) != 1 {
		t.Fatalf("kept %v", f.Kept)
	}
	want := map[string]bool{".gone.tmp": true, ".user.tmp": false}
	if len(f.Leftovers) != len(want) {
		t.Fatalf("leftovers %v", f.Leftovers)
	}
	for _, lo := range f.Leftovers {
		if ours, ok := want[lo.Entry.Name]; !ok || ours != lo.Ours {
			t.Fatalf("leftover %s: ours %v", lo.Entry.Name, lo.Ours)
		}
	}
}
