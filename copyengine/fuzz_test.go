package copyengine

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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

// checkTemp checks what the engine relies on for the temporary name tmp of
// the valid name n: a name of the same directory (no "/", no NUL, not "."
// or ".."), within the 255-byte limit, recognised as a temporary, not n
// itself, and valid UTF-8 when n is (some filesystems take nothing else).
func checkTemp(t *testing.T, kind, n, tmp string) {
	t.Helper()
	switch {
	case len(tmp) > 255:
		t.Fatalf("%s(%q) is %d bytes, more than a name may have", kind, n, len(tmp))
	case strings.ContainsAny(tmp, "/\x00") || tmp == "." || tmp == "..":
		t.Fatalf("%s(%q) = %q is not a name in the same directory", kind, n, tmp)
	case !isTempName(tmp):
		t.Fatalf("%s(%q) = %q is not recognised as a temporary", kind, n, tmp)
	case tmp == n:
		t.Fatalf("%s(%q) is the name itself", kind, n)
	case utf8.ValidString(n) && !utf8.ValidString(tmp):
		t.Fatalf("%s(%q) = %q is not valid UTF-8 though the name is", kind, n, tmp)
	}
}

// FuzzTempName checks the temporary names of two names of one directory:
// each is a proper temporary name, and distinct names never share one (two
// files written under one temporary would replace each other's data).
func FuzzTempName(f *testing.F) {
	seeds := nameSeeds()
	for i, a := range seeds {
		f.Add(a, seeds[(i+1)%len(seeds)])
	}
	long := strings.Repeat("x", 245)
	f.Add(long, fmt.Sprintf("%s~%016x", long[:200], xxh3.HashString(long)))
	f.Add("a", fmt.Sprintf("a~%016x", xxh3.HashString("a\x00taken")))
	f.Fuzz(func(t *testing.T, a, b string) {
		// Any string, even one no listing gives, must not panic.
		_, _, _ = tempName(a), altTempName(a), isTempName(a)
		if !validName(a) || !validName(b) {
			return
		}
		for _, n := range []string{a, b} {
			checkTemp(t, "tempName", n, tempName(n))
			checkTemp(t, "altTempName", n, altTempName(n))
			if tempName(n) == altTempName(n) {
				t.Fatalf("tempName and altTempName of %q are both %q", n, tempName(n))
			}
		}
		taken := map[string]bool{altTempName(a): true, b: true, tempName(b): true}
		if ft := freeTempName(a, func(s string) bool { return taken[s] }); taken[ft] {
			t.Fatalf("freeTempName(%q) = %q, a name that is taken", a, ft)
		} else {
			checkTemp(t, "freeTempName", a, ft)
		}
		if a == b {
			return
		}
		temps := map[string]string{
			"tempName(a)": tempName(a), "tempName(b)": tempName(b),
			"altTempName(a)": altTempName(a), "altTempName(b)": altTempName(b),
		}
		seen := map[string]string{}
		for k, v := range temps {
			if prev, ok := seen[v]; ok {
				t.Fatalf("%s and %s are both %q for a=%q, b=%q", prev, k, v, a, b)
			}
			seen[v] = k
		}
	})
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
