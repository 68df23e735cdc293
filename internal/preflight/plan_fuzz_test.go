package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// FuzzMakePlan runs the argument rules on arbitrary arguments, relative
// to a directory holding a file, a directory, symlinks and a FIFO: they
// never panic, a refusal says what and what to do (naming the path, unless
// an argument is empty), a plan never puts a copy outside the destination,
// and nothing is created.
func FuzzMakePlan(f *testing.F) {
	for _, s := range [][3]string{
		{"file", "", "dest"}, {"dir", "", "dest"}, {"dir", "file", "dir2"}, {"..", "dir", "dir2"},
		{".", "file", "dir2"}, {"/", "file", "dir2"}, {"dir/..", "file", "dir2"}, {"", "", ""},
		{"file", "", "dir/"}, {"file", "", "nowhere/"}, {"dir", "", "file"}, {"dir", "", "dir/sub"},
		{"file", "file", "dir2"}, {"link", "", "dest"}, {"dangling", "", "dest"}, {"fifo", "", "dest"},
		{"a\x00b", "", "dest"}, {"new\nline", "", "dest"}, {"bad\xff", "", "dest"}, {"-rf", "", "--force"},
		{strings.Repeat("n", 255), "", strings.Repeat("d", 256)}, {"dir/.", "file/..", "dir2/."},
		{"../..", "dir", "dir2"}, {"dir", "dir2", "dir2/x/.."},
		{"..", "file", "../../out"}, {".", "dir", "../../out"}, {"./", "dir", "../../out/"}, {"dir/sub/..", "file", "../../out"},
	} {
		for n := uint8(1); n <= 2; n++ {
			f.Add(s[0], s[1], s[2], n)
		}
	}
	work := f.TempDir()
	dir := filepath.Join(work, "in", "here")
	for _, d := range []string{"dir/sub", "dir2", "../../out"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{"file", "dir/sub/f", "dir2/g"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		f.Fatal(err)
	}
	if d, err := fileio.OpenDir(dir); err == nil {
		if err := d.Mknod("fifo", fileio.ModeFIFO|0o644, 0); err != nil {
			f.Logf("no FIFO among the arguments: %v", err)
		}
		d.Close()
	}
	count := func() int {
		n := 0
		_ = filepath.WalkDir(work, func(string, os.DirEntry, error) error { n++; return nil })
		return n
	}
	entries := count()

	f.Fuzz(func(t *testing.T, a, b, dest string, n uint8) {
		t.Chdir(dir)
		sources := []string{a, b}[:1+int(n)%2]
		p, err := Make(Config{Sources: sources, Dest: dest})
		empty := dest == ""
		for _, s := range sources {
			empty = empty || s == ""
		}
		if err != nil {
			var r *refusal.Error
			switch {
			case !errors.As(err, &r):
				t.Fatalf("Make(%q, %q) returned %v, not a refusal", sources, dest, err)
			case r.Msg == "" || r.Hint == "":
				t.Fatalf("Make(%q, %q): a refusal without a message or a hint: %+v", sources, dest, r)
			case r.Path == "" && !empty:
				t.Fatalf("Make(%q, %q): a refusal that names no path: %v", sources, dest, r)
			}
			return
		}
		if empty {
			t.Fatalf("Make(%q, %q) made a plan from an empty argument", sources, dest)
		}
		if p.DstRoot == "" || len(p.Roots) != len(sources) {
			t.Fatalf("Make(%q, %q) = %+v", sources, dest, p)
		}
		for _, r := range p.Roots {
			if r.DstRel == "" {
				if !r.IsDir || len(sources) != 1 {
					t.Fatalf("Make(%q, %q): %q lands on the destination root itself", sources, dest, r.Src)
				}
				continue
			}
			if !filepath.IsLocal(r.DstRel) || strings.ContainsRune(r.DstRel, '/') || r.DstRel == "." {
				t.Fatalf("Make(%q, %q): %q lands on %q, not a name in %q", sources, dest, r.Src, r.DstRel, p.DstRoot)
			}
		}
		if got := count(); got != entries {
			t.Fatalf("Make(%q, %q) changed the directory: %d entries, %d before", sources, dest, got, entries)
		}
	})
}
