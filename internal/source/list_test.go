//go:build !windows

package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/filter"
)

// TestListerExcludes: a listing leaves out what the rules exclude and
// what also names; a symlink to a directory is a directory for the rules
// only with -L.
func TestListerExcludes(t *testing.T) {
	src := t.TempDir()
	for _, f := range []string{"a.txt", "b.log", "keep/x", "mhl/y"} {
		writeSeamFile(t, filepath.Join(src, f), []byte(f))
	}
	if err := os.Symlink("keep", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	rules, err := filter.Make(filter.Config{Rules: []filter.Rule{{Kind: filter.Exclude, Pattern: "*.log"}, {Kind: filter.Exclude, Pattern: "link/"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, deref := range []bool{false, true} {
		l := Lister{Rules: rules, Deref: deref}
		ls, err := l.Open(src, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		ls.Exclude(func(name string) bool { return name == "mhl" })
		var kept []string
		for i, n := range ls.Names {
			if !ls.Excluded[i] {
				kept = append(kept, n.Name)
			}
		}
		ls.Dir.Close()
		want := []string{"a.txt", "keep", "link"}
		if deref {
			want = []string{"a.txt", "keep"}
		}
		if !slices.Equal(kept, want) {
			t.Fatalf("-L %v: kept %v, want %v", deref, kept, want)
		}
	}
}

// TestListerLoop: with -L a directory that leads back to one above it is
// refused; without, the symlink is not followed at all.
func TestListerLoop(t *testing.T) {
	src := t.TempDir()
	writeSeamFile(t, filepath.Join(src, "d/f"), []byte("f"))
	if err := os.Symlink("..", filepath.Join(src, "d/up")); err != nil {
		t.Fatal(err)
	}
	l := Lister{Deref: true}
	root, err := l.Open(src, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Dir.Close()
	d, err := l.Open(src, "d", root.Here)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Dir.Close()
	if _, err := l.Open(src, "d/up", d.Here); err == nil {
		t.Fatal("a loop through a followed symlink was listed")
	}
}

// TestListingStat: a name stats as its target with -L, its missing
// target is an error, a name gone since the listing is nothing, and the
// stats taken ahead in inode order are the ones given.
func TestListingStat(t *testing.T) {
	src := t.TempDir()
	writeSeamFile(t, filepath.Join(src, "a"), []byte("abc"))
	writeSeamFile(t, filepath.Join(src, "gone"), nil)
	for _, s := range [][2]string{{"a", "to-a"}, {"missing", "dangling"}} {
		if err := os.Symlink(s[0], filepath.Join(src, s[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, pre := range []bool{false, true} {
		l := Lister{Deref: true}
		ls, err := l.Open(src, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if pre {
			ls.PreStat(context.Background(), func(int) bool { return false })
		}
		if err := os.Remove(filepath.Join(src, "gone")); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for i, n := range ls.Names {
			st, ok, err := ls.Stat(i)
			switch n.Name {
			case "a", "to-a":
				if !ok || !st.IsRegular() || st.Size != 3 {
					t.Fatalf("%s: ok %v, err %v, size %d", n.Name, ok, err, st.Size)
				}
			case "dangling":
				if ok || err == nil {
					t.Fatalf("dangling: ok %v, err %v", ok, err)
				}
			case "gone":
				if pre != ok || err != nil { // stat'd ahead while still there
					t.Fatalf("gone (stat'd ahead %v): ok %v, err %v", pre, ok, err)
				}
			}
		}
		ls.Dir.Close()
		writeSeamFile(t, filepath.Join(src, "gone"), nil)
	}
}

// TestListingOwn: the cache's file and its journals, in its directory,
// are the cache's own; a file named like a journal elsewhere is not.
func TestListingOwn(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.db")
	writeSeamFile(t, cache, []byte("db"))
	writeSeamFile(t, filepath.Join(dir, "other"), []byte("x"))
	l := Lister{Own: OwnOf(cache)}
	ls, err := l.Open(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Dir.Close()
	for i, n := range ls.Names {
		st, ok, err := ls.Stat(i)
		if !ok {
			t.Fatal(err)
		}
		if own := ls.Own(i, &st); own != (n.Name == "cache.db") {
			t.Fatalf("%s: Own %v", n.Name, own)
		}
	}
	if (&Own{}).Journal(ls.Dir, "cache.db") {
		t.Fatal("no cache has journals")
	}
}

func TestDestsInto(t *testing.T) {
	root := t.TempDir()
	d, err := fileio.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var s Dests
	st, err := d.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Into(&st, "/src", "a"); err != nil {
		t.Fatalf("a directory not noted: %v", err)
	}
	s.Note(d)
	if err := s.Into(&st, "/src", "a"); err == nil || !strings.Contains(err.Error(), `"/src/a" is a directory this run writes in`) {
		t.Fatalf("a directory noted: %v", err)
	}
}
