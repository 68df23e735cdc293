package copyengine

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
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
