package copyengine

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// The fuzz targets of the engine's path handling. CI runs each for a few
// seconds (.ci/run); a plain go test runs their seeds.

// validName reports whether s is a name a directory listing can give: one
// path component, neither "." nor "..", at most 255 bytes, no NUL.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= 255 && !strings.ContainsAny(s, "/\x00")
}

// nameSeeds are names the fuzz targets start from: the odd ones a tree from
// another system, a careless script or a hostile user can hold.
func nameSeeds() []string {
	long := strings.Repeat("x", 245)
	return []string{
		"a", "..", ".", "...", "a\x00b", "new\nline", "\n", "cr\r", "bad\xff\xfe", "\xc3",
		strings.Repeat("n", 255), strings.Repeat("n", 241), strings.Repeat("n", 242), strings.Repeat("n", 256),
		strings.Repeat("é", 127) + "x", "x" + strings.Repeat("é", 127),
		"-rf", "--force", "-", ".a" + tempSuffix, tempSuffix, "." + tempSuffix, "sp ace", `back\slash`, "*", "[a]", "a?",
		// Names shaped like the digest form of another name's temporary.
		fmt.Sprintf("%s~%016x", long[:200], xxh3.HashString(long)),
		fmt.Sprintf("a~%016x", xxh3.HashString("a\x00taken")),
	}
}

// FuzzRelPath checks the destination paths built from names: joinRel of a
// path below the root and a name stays below the root (no "..", no leading
// "/", nothing that cleans to something else) and splitRel takes it apart
// again.
func FuzzRelPath(f *testing.F) {
	seeds := nameSeeds()
	for i, n := range seeds {
		f.Add(seeds[(i+3)%len(seeds)]+"/"+seeds[(i+7)%len(seeds)], n)
	}
	f.Add("", "a")
	f.Add("../..", "etc")
	f.Add("/abs", "x")
	f.Fuzz(func(t *testing.T, dirSpec, name string) {
		_, _ = splitRel(dirSpec) // any string: no panic
		// The walk builds directories from names of listings, one joinRel
		// at a time, from the root ("").
		dir := ""
		for _, c := range strings.Split(dirSpec, "/") {
			if validName(c) {
				dir = joinRel(dir, c)
			}
		}
		if !validName(name) {
			return
		}
		rel := joinRel(dir, name)
		if !filepath.IsLocal(rel) || strings.HasPrefix(rel, "/") || path.Clean(rel) != rel {
			t.Fatalf("joinRel(%q, %q) = %q does not stay below the root", dir, name, rel)
		}
		for _, c := range strings.Split(rel, "/") {
			if c == ".." || c == "." || c == "" {
				t.Fatalf("joinRel(%q, %q) = %q has the component %q", dir, name, rel, c)
			}
		}
		if d, n := splitRel(rel); d != dir || n != name {
			t.Fatalf("splitRel(%q) = %q, %q; want %q, %q", rel, d, n, dir, name)
		}
		if d, n := splitRel(joinRel(dir, tempName(name))); d != dir || n != tempName(name) {
			t.Fatalf("the temporary of %q lands in %q as %q, not beside it in %q", rel, d, n, dir)
		}
	})
}

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
		p, err := makePlan(sources, dest)
		empty := dest == ""
		for _, s := range sources {
			empty = empty || s == ""
		}
		if err != nil {
			var r *RefusalError
			switch {
			case !errors.As(err, &r):
				t.Fatalf("makePlan(%q, %q) returned %v, not a refusal", sources, dest, err)
			case r.Msg == "" || r.Hint == "":
				t.Fatalf("makePlan(%q, %q): a refusal without a message or a hint: %+v", sources, dest, r)
			case r.Path == "" && !empty:
				t.Fatalf("makePlan(%q, %q): a refusal that names no path: %v", sources, dest, r)
			}
			return
		}
		if empty {
			t.Fatalf("makePlan(%q, %q) made a plan from an empty argument", sources, dest)
		}
		if p.dstRoot == "" || len(p.roots) != len(sources) {
			t.Fatalf("makePlan(%q, %q) = %+v", sources, dest, p)
		}
		for _, r := range p.roots {
			if r.dstRel == "" {
				if !r.isDir || len(sources) != 1 {
					t.Fatalf("makePlan(%q, %q): %q lands on the destination root itself", sources, dest, r.src)
				}
				continue
			}
			if !filepath.IsLocal(r.dstRel) || strings.ContainsRune(r.dstRel, '/') || r.dstRel == "." {
				t.Fatalf("makePlan(%q, %q): %q lands on %q, not a name in %q", sources, dest, r.src, r.dstRel, p.dstRoot)
			}
		}
		if got := count(); got != entries {
			t.Fatalf("makePlan(%q, %q) changed the directory: %d entries, %d before", sources, dest, got, entries)
		}
	})
}
