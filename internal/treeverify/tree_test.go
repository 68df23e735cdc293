package treeverify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/verify"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if len(content) > 2 && content[:2] == "->" {
			if err := os.Symlink(content[2:], p); err != nil {
				t.Fatal(err)
			}
			windowsSymlinkMade(t, p)
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func kinds(r Report) map[string]string {
	m := map[string]string{}
	for _, d := range r.Diffs {
		m[d.Path] = d.Kind
	}
	return m
}

func TestCompareTrees(t *testing.T) {
	base := map[string]string{"a": "same", "d/b": "same too", "l": "->a", "gone": "x", "t": "file"}
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, base)
	writeTree(t, dst, map[string]string{"a": "same", "d/b": "same to0", "l": "->d/b", "extra": "y", "t/x": "dir now"})
	r, err := CompareTrees(context.Background(), src, dst, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"d/b": Differ, "l": Differ, "gone": Missing, "extra": Extra, "t": TypeDiff, "t/x": Extra}
	got := kinds(r)
	for p, k := range want {
		if got[p] != k {
			t.Errorf("%q: got %q, want %q (all: %v)", p, got[p], k, got)
		}
	}
	if len(got) != len(want) || r.OK() {
		t.Errorf("differences %v, want exactly %v", got, want)
	}

	same := t.TempDir()
	writeTree(t, same, base)
	r, err = CompareTrees(context.Background(), src, same, TreeOptions{})
	if err != nil || !r.OK() || r.Files != 4 {
		t.Fatalf("identical trees: %+v, %v", r, err)
	}
}

func TestCheckManifest(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "one", "sub/b": "two", "unlisted": "three"})
	entries := []verify.ManifestEntry{
		{Sum: verify.Bytes([]byte("one")), Path: "a"},
		{Sum: verify.Bytes([]byte("TWO")), Path: "sub/b"},
		{Sum: verify.Bytes([]byte("four")), Path: "missing"},
	}
	r, err := CheckManifest(context.Background(), entries, dir, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := kinds(r)
	if got["sub/b"] != Differ || got["missing"] != Missing || len(got) != 2 {
		t.Errorf("differences %v", got)
	}
	if r.Extra != 1 {
		t.Errorf("extra = %d, want 1 (unlisted files are counted, not failed)", r.Extra)
	}
}

// TestCompareTreesExclude leaves excluded paths out of both sides: neither
// missing nor extra, and an excluded directory's contents neither.
func TestCompareTreesExclude(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a": "same", "x.tmp": "gone", "cache/c": "gone", "d/b": "same"})
	writeTree(t, dst, map[string]string{"a": "same", "d/b": "same", "d/old.tmp": "extra", "cache": "a file now"})
	exclude := func(rel string, isDir bool) bool {
		return strings.HasSuffix(rel, ".tmp") || (isDir && rel == "cache")
	}
	r, err := CompareTrees(context.Background(), src, dst, TreeOptions{Exclude: exclude})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cache": Extra} // a file: the rule is for directories
	if got := kinds(r); len(got) != len(want) || got["cache"] != Extra {
		t.Errorf("differences %v, want exactly %v", got, want)
	}
	if r.Files != 2 {
		t.Errorf("compared %d files, want 2", r.Files)
	}
}

// With Unlisted, files the manifest does not list fail the check unless
// Unlisted says they are none of its business; those are not counted.
func TestCheckManifestUnlisted(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "listed", "new": "not listed", "skip/x": "ignored", "l": "->a"})
	entries := []verify.ManifestEntry{{Path: "a", Sum: verify.Bytes([]byte("listed"))}}
	r, err := CheckManifest(context.Background(), entries, dir, TreeOptions{Unlisted: func(rel string) bool { return rel != "skip/x" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(r); len(got) != 1 || got["new"] != Extra || r.Extra != 1 || r.OK() {
		t.Fatalf("differences %v, extra %d", got, r.Extra)
	}
	r, err = CheckManifest(context.Background(), entries, dir, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Extra != 2 {
		t.Fatalf("without Unlisted: differences %v, extra %d", kinds(r), r.Extra)
	}
}

// Files listed without a digest fastcopy checks are missing when absent,
// unchecked when present, and never extra.
func TestCheckManifestUnhashed(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "listed", "md5only": "x"})
	entries := []verify.ManifestEntry{{Path: "a", Sum: verify.Bytes([]byte("listed"))}}
	opt := TreeOptions{Unlisted: func(string) bool { return true }, Unhashed: map[string]string{"md5only": "md5 only", "gone": "md5 only"}}
	r, err := CheckManifest(context.Background(), entries, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(r); len(got) != 2 || got["md5only"] != Unchecked || got["gone"] != Missing || r.Extra != 0 {
		t.Fatalf("differences %v, extra %d", got, r.Extra)
	}
}
