//go:build !windows

package meta

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestDeeper checks the directory pass's order: deepest first, the root last.
func TestDeeper(t *testing.T) {
	t.Parallel()
	rels := []string{"", "a", "a/b/c", "b", "a/b"}
	sort.SliceStable(rels, func(i, j int) bool { return Deeper(rels[i], rels[j]) })
	want := []string{"a/b/c", "a/b", "a", "b", ""}
	for i := range want {
		if rels[i] != want[i] {
			t.Fatalf("order %q, want %q", rels, want)
		}
	}
}

// testAccess reaches the directories of a test tree as the run's stager
// and walker would.
type testAccess struct {
	dst    *fileio.Dir
	staged map[string]bool
	opened []string
}

func (a *testAccess) Staged(rel string) bool { return a.staged[rel] }
func (a *testAccess) OpenDst(rel string) (*fileio.Dir, error) {
	a.opened = append(a.opened, rel)
	if rel == "" {
		return a.dst.OpenSub(".")
	}
	return a.dst.OpenBeneath(rel)
}
func (a *testAccess) OpenSrc(root, rel string) (*fileio.Dir, error) {
	return fileio.OpenDir(filepath.Join(root, rel))
}
func (a *testAccess) Lstat(rel string) (fileio.Stat, error) { return a.dst.Lstat(rel) }
func (a *testAccess) Resolution(uint64) int64               { return 1 }

// TestApplyDirs checks that the pass gives a directory its source's mode
// and times, leaves a staged one alone, and opens nothing for one already
// up to date.
func TestApplyDirs(t *testing.T) {
	t.Parallel()
	src, dst := t.TempDir(), t.TempDir()
	for _, d := range []string{"a", "s"} {
		if err := os.Mkdir(filepath.Join(dst, d), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(src, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(src, "a"), old, old); err != nil {
		t.Fatal(err)
	}
	srcRoot, err := fileio.OpenDir(src)
	if err != nil {
		t.Fatal(err)
	}
	defer srcRoot.Close()
	dstRoot, err := fileio.OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer dstRoot.Close()
	stA, err := srcRoot.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	stS, err := srcRoot.Lstat("s")
	if err != nil {
		t.Fatal(err)
	}
	uid, gid := os.Getuid(), os.Getgid()
	c := Config{Root: uid == 0, Euid: os.Geteuid(), Groups: map[uint32]bool{uint32(gid): true}}
	a := &testAccess{dst: dstRoot, staged: map[string]bool{"s": true}}
	var failed []string
	dirs := []Dir{{SrcRoot: src, SrcRel: "a", DstRel: "a", St: stA}, {SrcRoot: src, SrcRel: "s", DstRel: "s", St: stS}}
	c.ApplyDirs(dirs, a, func(rel string, err error) { failed = append(failed, rel+": "+err.Error()) })
	if len(failed) > 0 {
		t.Fatalf("failed: %q", failed)
	}
	got, err := dstRoot.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode&0o7777 != 0o750 || got.Mtime != old.UnixNano() {
		t.Fatalf("a: mode %o mtime %d, want 750 and %d", got.Mode&0o7777, got.Mtime, old.UnixNano())
	}
	if s, _ := dstRoot.Lstat("s"); s.Mode&0o7777 != 0o700 {
		t.Fatalf("the staged directory was given mode %o", s.Mode&0o7777)
	}
	a.opened = nil
	c.ApplyDirs(dirs[:1], a, func(rel string, err error) { t.Errorf("%s: %v", rel, err) })
	if len(a.opened) != 0 {
		t.Fatalf("an up-to-date directory was opened: %q", a.opened)
	}
}
