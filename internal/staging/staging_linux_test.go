//go:build linux

package staging

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
)

func newStager(t *testing.T) (*Stager, *fileio.Dir, string) {
	t.Helper()
	dir := t.TempDir()
	root, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	m := made.Load(made.Config{Root: root, Path: dir, SkipWrite: func() bool { return true }, UID: os.Geteuid()})
	return New(Config{Root: root, Made: m, Euid: os.Geteuid()}), root, dir
}

// TestStagePublish: a directory made under its temporary name is opened
// there by its own path, what was reported in it is held back until it is
// published, and a subdirectory's reports wait for its parent.
func TestStagePublish(t *testing.T) {
	sg, root, dir := newStager(t)
	if !sg.Mkdir(root, "a", ".a.tmp") {
		t.Fatal("Mkdir failed")
	}
	a, err := sg.Adopt(root, "a", ".a.tmp")
	if err != nil {
		t.Fatal(err)
	}
	ad, err := sg.OpenDir("a")
	if err != nil {
		t.Fatal(err)
	}
	if !sg.Mkdir(ad, "a/b", ".b.tmp") {
		t.Fatal("Mkdir of the subdirectory failed")
	}
	b, err := sg.Adopt(ad, "a/b", ".b.tmp")
	ad.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	sg.Report(a, func() { got = append(got, "a/f") })
	sg.Report(b, func() { got = append(got, "a/b/g") })
	if !sg.Staged("a/b/g") {
		t.Error("a/b/g is not staged")
	}
	if err := sg.Publish(b); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("reported %v before the parent was published", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".a.tmp", "b")); err != nil {
		t.Fatalf("the subdirectory is not in place in its staged parent: %v", err)
	}
	if err := sg.Publish(a); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("reported %v once published, want both", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); err != nil || sg.Staged("a/b") || len(sg.Left()) != 0 {
		t.Fatalf("a/b not in place once published: %v", err)
	}
}

// TestStageReplaced: a temporary name made to hold another directory is
// neither opened nor published, and what was placed in it is counted as
// not in place; a stage spoiled reports nothing.
func TestStageReplaced(t *testing.T) {
	sg, root, dir := newStager(t)
	sg.Mkdir(root, "a", ".a.tmp")
	a, err := sg.Adopt(root, "a", ".a.tmp")
	if err != nil {
		t.Fatal(err)
	}
	sg.Report(a, func() { t.Error("reported an entry of a replaced directory") })
	if err := os.Rename(filepath.Join(dir, ".a.tmp"), filepath.Join(dir, "other")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".a.tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := sg.OpenDir("a"); !errors.Is(err, ErrReplaced) {
		t.Errorf("OpenDir through a replaced stage: %v, want ErrReplaced", err)
	}
	var pe *PublishError
	if err := sg.Publish(a); !errors.As(err, &pe) || !pe.Replaced || pe.Lost != 1 {
		t.Fatalf("Publish of a replaced stage: %v", err)
	}
	if sg.Report(a, func() { t.Error("reported an entry of a failed stage") }) {
		t.Error("Report of a failed stage's entry said it was kept")
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("a replaced stage was published: %v", err)
	}
	if err := RemoveTree(root, "other"); err != nil {
		t.Fatal(err)
	}
}
