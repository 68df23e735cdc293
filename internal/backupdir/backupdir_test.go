package backupdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// within is Config.Inside by path: a names b or a place below it.
func within(a, b string) (bool, error) {
	rel, err := filepath.Rel(b, a)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)), nil
}

type kept struct {
	rel     string
	removed bool
}

func config(arg, dest string, got *[]kept) Config {
	return Config{
		Arg: arg, Dest: dest,
		Resolve:    func(p string) (string, error) { return filepath.Clean(p), nil },
		Inside:     within,
		SkipWrite:  func() bool { return false },
		CheckInode: func() bool { return true },
		TempName:   func(target string, _ func(string) bool) string { return "." + target + ".tmp" },
		Buffer:     func() *[]byte { b := make([]byte, verify.BufSize); return &b },
		Release:    func(*[]byte) {},
		ModesLost:  func(error) bool { return false },
		Kept:       func(rel string, removed bool) { *got = append(*got, kept{rel, removed}) },
	}
}

// TestOpenRefusesOverlap refuses a backup directory inside DEST or a
// source, or holding either.
func TestOpenRefusesOverlap(t *testing.T) {
	top := t.TempDir()
	dest, src := filepath.Join(top, "dest"), filepath.Join(top, "src")
	for _, c := range []struct{ arg, want string }{
		{filepath.Join(dest, "bak"), "is inside the destination"},
		{top, "holds the destination"},
		{filepath.Join(src, "bak"), "is inside the source"},
	} {
		var got []kept
		cfg := config(c.arg, dest, &got)
		cfg.Sources = []Source{{Arg: src, Dir: src}}
		if c.arg == top {
			cfg.Dest = filepath.Join(top, "d2", "dest")
			cfg.Sources = nil
			cfg.Arg = filepath.Join(top, "d2")
		}
		if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q): %v, want a refusal that it %s", cfg.Arg, err, c.want)
		}
	}
}

// TestFreeName numbers a name taken, as cp --backup=numbered does.
func TestFreeName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"f", "f.~1~"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		name string
		n    int
		want string
	}{{"f", 0, "f.~2~"}, {"g", 0, "g"}, {"g", 3, "g.~3~"}} {
		if got, err := freeName(d, c.name, c.n); err != nil || got != c.want {
			t.Errorf("freeName(%q, %d) = %q, %v; want %q", c.name, c.n, got, err, c.want)
		}
	}
}

// TestPreserveKeepsEveryVersion keeps an old version under its path in
// the backup directory, a second one beside it numbered, and removes the
// name from DEST only when asked.
func TestPreserveKeepsEveryVersion(t *testing.T) {
	top := t.TempDir()
	dest, bak := filepath.Join(top, "dest"), filepath.Join(top, "bak")
	if err := os.MkdirAll(filepath.Join(dest, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []kept
	b, err := Open(config(bak, dest, &got))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dd, err := fileio.OpenDir(filepath.Join(dest, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	for i, v := range []string{"one", "two"} {
		// A new file: the backup of the first is a link to its inode.
		_ = os.Remove(filepath.Join(dest, "sub", "f"))
		if err := os.WriteFile(filepath.Join(dest, "sub", "f"), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := dd.Lstat("f")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Preserve(dd, "f", "sub/f", st, i == 1); err != nil {
			t.Fatalf("Preserve %s: %v", v, err)
		}
	}
	for name, want := range map[string]string{"sub/f": "one", "sub/f.~1~": "two"} {
		if data, err := os.ReadFile(filepath.Join(bak, filepath.FromSlash(name))); err != nil || string(data) != want {
			t.Errorf("backup %s: %q, %v; want %q", name, data, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dest, "sub", "f")); !os.IsNotExist(err) {
		t.Errorf("sub/f still in DEST after a removing Preserve: %v", err)
	}
	if len(got) != 2 || got[0] != (kept{"sub/f", false}) || got[1] != (kept{"sub/f", true}) {
		t.Errorf("Kept told %v", got)
	}
}
