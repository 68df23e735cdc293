package copyengine_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// copiedPaths lists the paths below dir, a directory's with a final "/".
func copiedPaths(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestFilter runs Options.Filter, Excludes and FilesFrom through Run: the
// first matching rule decides, Excludes come after Filter, an excluded
// directory is not created (nor, in a dry run, reported), and FilesFrom
// narrows what the rules see.
func TestFilter(t *testing.T) {
	src := t.TempDir()
	for _, f := range []string{"keep.log", "a.log", "cache/c", "sub/cache", "sub/b.txt", "docs/d/x.txt", "docs/y.tmp"} {
		writeFile(t, filepath.Join(src, filepath.FromSlash(f)), []byte(f))
	}
	in := func(p string) copyengine.FilterRule {
		return copyengine.FilterRule{Kind: copyengine.FilterInclude, Pattern: p}
	}
	ex := func(p string) copyengine.FilterRule {
		return copyengine.FilterRule{Kind: copyengine.FilterExclude, Pattern: p}
	}
	for _, tc := range []struct {
		name     string
		filter   []copyengine.FilterRule
		excludes []string
		files    []string
		want     string
	}{
		{"first match wins", []copyengine.FilterRule{in("keep.log"), ex("*.log"), ex("cache/")}, nil, nil,
			"docs/ docs/d/ docs/d/x.txt docs/y.tmp keep.log sub/ sub/b.txt sub/cache"},
		{"Excludes after Filter", []copyengine.FilterRule{in("*.log")}, []string{"*.log", "docs", "sub"}, nil,
			"a.log cache/ cache/c keep.log"},
		{"files-from and rules", []copyengine.FilterRule{ex("*.tmp")}, nil, []string{"docs", "sub/b.txt"},
			"docs/ docs/d/ docs/d/x.txt sub/ sub/b.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			var ev events
			opt := copyengine.Options{Sources: []string{src}, Dest: dst, Filter: tc.filter, Excludes: tc.excludes, FilesFrom: tc.files, DryRun: true, OnEvent: ev.record}
			if _, err := runEngine(t, opt); err != nil {
				t.Fatal(err)
			}
			var dry []string
			for _, e := range ev.all {
				if e.Action == copyengine.ActWouldDo {
					dry = append(dry, e.Path)
				}
				if !strings.Contains(tc.want, "cache/") && strings.HasPrefix(e.Path, "cache") {
					t.Errorf("dry run reports %s %q, which the rules leave out", e.Action, e.Path)
				}
			}
			opt.DryRun, opt.OnEvent = false, nil
			if _, err := runEngine(t, opt); err != nil {
				t.Fatal(err)
			}
			got := copiedPaths(t, dst)
			if strings.Join(got, " ") != tc.want {
				t.Errorf("copied %q, want %q", got, tc.want)
			}
			// The dry run names each file the copy copied.
			var files []string
			for _, p := range got {
				if !strings.HasSuffix(p, "/") {
					files = append(files, p)
				}
			}
			slices.Sort(dry)
			if !slices.Equal(dry, files) {
				t.Errorf("dry run would copy %q, the copy copied %q", dry, files)
			}
		})
	}
}

// TestFilterRefused: a malformed pattern or a files-from path out of the
// source is refused before anything is written, naming it, with a hint.
func TestFilterRefused(t *testing.T) {
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "a"), []byte("a"))
	for _, tc := range []struct {
		opt  copyengine.Options
		path string
	}{
		{copyengine.Options{Filter: []copyengine.FilterRule{{Kind: copyengine.FilterInclude, Pattern: "a["}}}, "a["},
		{copyengine.Options{Excludes: []string{"{x"}}, "{x"},
		{copyengine.Options{FilesFrom: []string{"a", "../b"}}, "../b"},
	} {
		dst := filepath.Join(t.TempDir(), "dst")
		tc.opt.Sources, tc.opt.Dest = []string{src}, dst
		_, err := runEngine(t, tc.opt)
		var re *copyengine.RefusalError
		if !errors.As(err, &re) || re.Path != tc.path || re.Hint == "" {
			t.Errorf("%q: err = %v, want a refusal naming it with a hint", tc.path, err)
		}
		if got := copiedPaths(t, filepath.Dir(dst)); len(got) != 0 {
			t.Errorf("%q: refused, yet %q written", tc.path, got)
		}
	}
}
