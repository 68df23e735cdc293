package filter

import (
	"strings"
	"testing"
)

// globEscape quotes the characters doublestar gives a meaning.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ { // bytes: a name need not be UTF-8
		if strings.IndexByte(`*?[]{}\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzRules checks pattern parsing and matching: no pattern or path
// panics, a pattern New accepts Compile accepts, and a pattern equal to a
// name or to a relative path (as written or with its glob characters
// quoted) excludes it.
func FuzzRules(f *testing.F) {
	for _, s := range [][2]string{
		{"*", "a/b"}, {"dir/", "dir/x"}, {"[", "["}, {`\`, `\`}, {"photo[1].jpg", "photo[1].jpg"},
		{"**/*.tmp", "a/b/c.tmp"}, {"./x", "x"}, {"/a/**/b/", "a/b"}, {"{a,b", "a"}, {"a\xffb", "x/a\xffb"},
		{"#x", "#x"}, {"- x", "- x"}, {" ", "a/ "}, {"a//b", "a/b"},
	} {
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, pattern, rel string, isDir bool) {
		r, err := New([]Rule{ex(pattern)}, nil)
		if (err == nil) != (Compile(ex(pattern)) == nil) {
			t.Fatalf("New and Compile disagree on %q", pattern)
		}
		_ = r.Excluded(rel, isDir) // any pattern, any path: no panic
		if fs, err := New(nil, []string{pattern}); err == nil {
			_ = fs.Excluded(rel, isDir)
		}
		// The walk matches paths built from the names of listings.
		var parts []string
		for _, c := range strings.Split(rel, "/") {
			if c != "" && c != "." && c != ".." && !strings.ContainsRune(c, 0) {
				parts = append(parts, c)
			}
		}
		if len(parts) == 0 {
			return
		}
		rel = strings.Join(parts, "/")
		base := parts[len(parts)-1]
		for _, p := range []string{base, rel, globEscape(base), globEscape(rel)} {
			r, err := New([]Rule{ex(p)}, nil)
			if err != nil {
				continue // refused up front
			}
			if !r.Excluded(rel, isDir) {
				t.Fatalf("--exclude %q does not exclude %q", p, rel)
			}
		}
	})
}
