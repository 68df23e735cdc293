package copyengine

import (
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fuzzseed"
)

// The fuzz targets of the engine's path handling. CI runs each for a few
// seconds (.ci/run); a plain go test runs their seeds.

// FuzzRelPath checks the destination paths built from names: joinRel of a
// path below the root and a name stays below the root (no "..", no leading
// "/", nothing that cleans to something else) and splitRel takes it apart
// again.
func FuzzRelPath(f *testing.F) {
	seeds := fuzzseed.Names()
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
			if fuzzseed.ValidName(c) {
				dir = joinRel(dir, c)
			}
		}
		if !fuzzseed.ValidName(name) {
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
		if d, n := splitRel(joinRel(dir, destfs.TempName(name))); d != dir || n != destfs.TempName(name) {
			t.Fatalf("the temporary of %q lands in %q as %q, not beside it in %q", rel, d, n, dir)
		}
	})
}
