package destfs_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fuzzseed"
)

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
	case !destfs.IsTempName(tmp):
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
	seeds := fuzzseed.Names()
	for i, a := range seeds {
		f.Add(a, seeds[(i+1)%len(seeds)])
	}
	long := strings.Repeat("x", 245)
	f.Add(long, fmt.Sprintf("%s~%016x", long[:200], xxh3.HashString(long)))
	f.Add("a", fmt.Sprintf("a~%016x", xxh3.HashString("a\x00taken")))
	f.Fuzz(func(t *testing.T, a, b string) {
		// Any string, even one no listing gives, must not panic.
		_, _, _ = destfs.TempName(a), destfs.AltTempName(a), destfs.IsTempName(a)
		if !fuzzseed.ValidName(a) || !fuzzseed.ValidName(b) {
			return
		}
		for _, n := range []string{a, b} {
			checkTemp(t, "TempName", n, destfs.TempName(n))
			checkTemp(t, "AltTempName", n, destfs.AltTempName(n))
			if destfs.TempName(n) == destfs.AltTempName(n) {
				t.Fatalf("TempName and AltTempName of %q are both %q", n, destfs.TempName(n))
			}
		}
		taken := map[string]bool{destfs.AltTempName(a): true, b: true, destfs.TempName(b): true}
		if ft := destfs.FreeTempName(a, func(s string) bool { return taken[s] }); taken[ft] {
			t.Fatalf("FreeTempName(%q) = %q, a name that is taken", a, ft)
		} else {
			checkTemp(t, "FreeTempName", a, ft)
		}
		if a == b {
			return
		}
		temps := map[string]string{
			"TempName(a)": destfs.TempName(a), "TempName(b)": destfs.TempName(b),
			"AltTempName(a)": destfs.AltTempName(a), "AltTempName(b)": destfs.AltTempName(b),
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
