package filter

import (
	"errors"
	"strings"
	"testing"
)

func ex(p string) Rule { return Rule{Kind: Exclude, Pattern: p} }
func in(p string) Rule { return Rule{Kind: Include, Pattern: p} }

// TestExcluded holds each rule of the package doc to an example.
func TestExcluded(t *testing.T) {
	type path struct {
		rel   string
		isDir bool
		out   bool // excluded
	}
	f := func(rel string, out bool) path { return path{rel, false, out} }
	d := func(rel string, out bool) path { return path{rel, true, out} }
	for _, tc := range []struct {
		name  string
		rules []Rule
		paths []path
	}{
		{"no rules", nil, []path{f("a", false), d("a/b", false)}},
		{"** matches across directories, none included", []Rule{ex("**/*.tmp")},
			[]path{f("x.tmp", true), f("a/x.tmp", true), f("a/b/c/x.tmp", true), f("a/x.tmpl", false), f("x.tmp/y", false)}},
		{"** in the middle", []Rule{ex("a/**/z")},
			[]path{f("a/z", true), f("a/b/c/z", true), f("b/a/z", false)}},
		{"dir/** matches the directory too", []Rule{ex("cache/**")},
			[]path{d("cache", true), f("cache/x", true), f("sub/cache/x", false)}},
		{"* does not cross a slash", []Rule{ex("a/*")},
			[]path{f("a/b", true), d("a/b", true), f("a/b/c", false), d("a", false)}},
		{"no slash: the base name at any depth", []Rule{ex("*.log")},
			[]path{f("x.log", true), f("a/b/x.log", true), d("logs.log", true), f("x.log.1", false)}},
		{"no slash, a plain name", []Rule{ex("cache")},
			[]path{d("cache", true), d("a/cache", true), f("a/b/cache", true), d("caches", false)}},
		{"a leading / anchors at the root", []Rule{ex("/cache")},
			[]path{d("cache", true), d("a/cache", false), f("cache", true)}},
		{"a leading ./ is a leading /", []Rule{ex("./cache")},
			[]path{d("cache", true), d("a/cache", false)}},
		{"an inner slash anchors", []Rule{ex("sub/cache")},
			[]path{d("sub/cache", true), d("a/sub/cache", false), d("cache", false)}},
		{"an inner slash anchors; **/ frees it", []Rule{ex("**/sub/cache")},
			[]path{d("sub/cache", true), d("a/sub/cache", true), d("a/b/sub/cache", true)}},
		{"a trailing / matches directories only", []Rule{ex("cache/")},
			[]path{d("cache", true), d("a/cache", true), f("cache", false), f("a/cache", false)}},
		{"an anchored directory-only pattern", []Rule{ex("/a/cache/")},
			[]path{d("a/cache", true), f("a/cache", false), d("b/a/cache", false)}},
		{"./ and a trailing /", []Rule{ex("./cache/")},
			[]path{d("cache", true), f("cache", false), d("x/cache", false)}},
		{"a pattern matches its own name as written", []Rule{ex("photo[1].jpg"), ex("sub/{a}")},
			[]path{f("photo[1].jpg", true), f("photo1.jpg", true), f("photo2.jpg", false), f("sub/{a}", true), f("sub/a", true)}},
		{"braces and classes", []Rule{ex("*.{jpg,png}"), ex("[0-9]*")},
			[]path{f("a.jpg", true), f("b/a.png", true), f("a.gif", false), f("7up", true)}},
		{"quoting", []Rule{ex(`\*`)},
			[]path{f("*", true), f("a", false)}},
		{"first match wins: include before exclude", []Rule{in("keep.log"), ex("*.log")},
			[]path{f("keep.log", false), f("a/keep.log", false), f("other.log", true)}},
		{"first match wins: exclude before include", []Rule{ex("*.log"), in("keep.log")},
			[]path{f("keep.log", true), f("other.log", true), f("x.txt", false)}},
		{"only some files: directories included first", []Rule{in("*/"), in("*.jpg"), ex("*")},
			[]path{d("a", false), d("a/b", false), f("a/b/x.jpg", false), f("x.jpg", false), f("a/x.txt", true)}},
		{"an include below an excluded directory does not reach in", []Rule{ex("dir/"), in("dir/keep")},
			[]path{d("dir", true)}},
		{"an include below an excluded directory, include first", []Rule{in("dir/keep"), ex("dir/")},
			// dir is still excluded (dir/keep does not match "dir"), and
			// the walk never sees dir/keep.
			[]path{d("dir", true)}},
		{"keeping one file of a directory: exclude its contents", []Rule{in("dir/keep"), ex("dir/*")},
			[]path{d("dir", false), f("dir/keep", false), f("dir/other", true), d("dir/sub", true)}},
		{"a directory-level include", []Rule{in("dir/"), ex("*")},
			[]path{d("dir", false), f("dir", true), f("dir/x", true), d("other", true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(tc.rules, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.paths {
				if got := r.Excluded(p.rel, p.isDir); got != p.out {
					t.Errorf("%v: Excluded(%q, dir=%v) = %v, want %v", tc.rules, p.rel, p.isDir, got, p.out)
				}
			}
		})
	}
}

func TestFilesFrom(t *testing.T) {
	type path struct {
		rel   string
		isDir bool
		out   bool
	}
	for _, tc := range []struct {
		name  string
		files []string
		rules []Rule
		paths []path
	}{
		{"a listed file and the directories leading to it", []string{"a/b/f"}, nil, []path{
			{"a", true, false}, {"a/b", true, false}, {"a/b/f", false, false},
			{"a/b/g", false, true}, {"a/c", true, true}, {"a", false, true}, {"f", false, true},
		}},
		{"a listed directory: itself and all below it", []string{"docs"}, nil, []path{
			{"docs", true, false}, {"docs/x", false, false}, {"docs/a/b/c", false, false}, {"docs2", true, true}, {"other", false, true},
		}},
		{"entries cleaned", []string{"./a//b/", "/c", "d/./e"}, nil, []path{
			{"a/b", true, false}, {"a/b/x", false, false}, {"c", false, false}, {"d/e", false, false}, {"d", true, false}, {"d/f", false, true},
		}},
		{"the source root lists all", []string{"./"}, nil, []path{{"x", false, false}, {"a/b", true, false}}},
		{"an empty list copies nothing", []string{}, nil, []path{{"x", false, true}, {"a", true, true}}},
		{"the rules still apply", []string{"docs"}, []Rule{ex("*.tmp")}, []path{
			{"docs/a", false, false}, {"docs/a.tmp", false, true}, {"x.tmp", false, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(tc.rules, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.paths {
				if got := r.Excluded(p.rel, p.isDir); got != p.out {
					t.Errorf("%q: Excluded(%q, dir=%v) = %v, want %v", tc.files, p.rel, p.isDir, got, p.out)
				}
			}
		})
	}
	for _, bad := range []string{"..", "../x", "a/../../b", "a/.."} {
		var pe *PathError
		if _, err := New(nil, []string{bad}); !errors.As(err, &pe) || pe.Path != bad || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("files-from %q: err = %v, want a *PathError naming it", bad, err)
		}
	}
}

func TestBadPatterns(t *testing.T) {
	for _, p := range []string{"[", "a[b", "{a,b", `a\`, "", "/", "./", "//", ".", "./."} {
		for _, k := range []Kind{Exclude, Include} {
			_, err := New([]Rule{ex("ok"), {Kind: k, Pattern: p}}, nil)
			var pe *PatternError
			if !errors.As(err, &pe) || !errors.Is(err, ErrPattern) || pe.Rule.Pattern != p || pe.Rule.Kind != k {
				t.Errorf("%s %q: err = %v, want a *PatternError naming it", k, p, err)
				continue
			}
			if want := k.String() + " " + `"` + strings.ReplaceAll(p, `\`, `\\`) + `"`; !strings.Contains(err.Error(), want) {
				t.Errorf("%s %q: %q does not name %s", k, p, err, want)
			}
			if Compile(Rule{Kind: k, Pattern: p}) == nil {
				t.Errorf("Compile(%q) accepts what New refuses", p)
			}
		}
	}
}

func TestReadRules(t *testing.T) {
	text := "# comment\n\n*.tmp\n+ keep.log\n- *.log\r\n  \n/cache/\n#not a rule\n+not-a-prefix\n"
	got, err := ReadRules(strings.NewReader(text), Exclude)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{ex("*.tmp"), in("keep.log"), ex("*.log"), ex("/cache/"), ex("+not-a-prefix")}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("rule %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestReadList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		nul  bool
		want []string
	}{
		{"a\nb/c\n\n d \n", false, []string{"a", "b/c", " d "}},
		{"a\x00new\nline\x00\x00", true, []string{"a", "new\nline"}},
		{"", false, []string{}},
		{"last", false, []string{"last"}},
	} {
		got, err := ReadList(strings.NewReader(tc.in), tc.nul)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("ReadList(%q, nul=%v) = %q, want %q", tc.in, tc.nul, got, tc.want)
		}
	}
}

func TestBuildExcludesAfterRules(t *testing.T) {
	r, err := Build(Config{Rules: []Rule{{Kind: Include, Pattern: "keep.log"}}, Excludes: []string{"*.log"}})
	if err != nil {
		t.Fatal(err)
	}
	ex := r.Excluder(t.TempDir())
	if ex("keep.log", false) || !ex("other.log", false) || ex("a.txt", false) {
		t.Errorf("keep.log %v, other.log %v, a.txt %v", ex("keep.log", false), ex("other.log", false), ex("a.txt", false))
	}
}
