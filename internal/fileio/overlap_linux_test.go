package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOverlapResolve resolves ".." after a symlink as the kernel does,
// also where the tail does not exist yet, and refuses ".." after a
// directory that does not exist.
func TestOverlapResolve(t *testing.T) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/d", "b/c", "b/d"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../b/c", filepath.Join(work, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../b/gone", filepath.Join(work, "a", "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"a/link/../d", "b/d"},
		{"a/link/..", "b"},
		{"a/link/../d/new/x", "b/d/new/x"},
		{"a/./link//../d/", "b/d"},
		{"a/link/../d/new/./x", "b/d/new/x"},
		{"a/dangling/sub", "b/gone/sub"},
		{"a/d", "a/d"},
	} {
		got, err := Resolve(filepath.Join(work, "") + "/" + tc.in)
		if err != nil || got != filepath.Join(work, tc.want) {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.in, got, err, filepath.Join(work, tc.want))
		}
	}
	if got, err := Resolve(work + "/a/link/../new/../d"); !errors.Is(err, ErrUpFromMissing) {
		t.Errorf("Resolve(a/link/../new/../d) = %q, %v; want ErrUpFromMissing", got, err)
	}
}

// TestOverlapWithin decides "a is b or below b" by identity: through a
// symlink, across a bind mount of a directory of b (whose ".." leads out
// of b), and not for siblings or for b below a.
func TestOverlapWithin(t *testing.T) {
	work := t.TempDir()
	for _, d := range []string{"dest/x/deep", "other", "mnt"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(work, "dest", "x"), filepath.Join(work, "s")); err != nil {
		t.Fatal(err)
	}
	open := func(p string) *Dir {
		t.Helper()
		d, err := OpenDir(filepath.Join(work, p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	check := func(a, b string, want bool) {
		t.Helper()
		got, err := Within(open(a), open(b))
		if err != nil || got != want {
			t.Errorf("Within(%s, %s) = %v, %v; want %v", a, b, got, err, want)
		}
	}
	check("dest", "dest", true)
	check("dest/x/deep", "dest", true)
	check("s", "dest", true)
	check("s/deep", "dest/x", true)
	check("dest", "dest/x", false)
	check("other", "dest", false)
	check("s", "other", false)

	if os.Geteuid() != 0 {
		t.Skip("skipping the bind-mount cases: needs root for a bind mount")
	}
	mnt := filepath.Join(work, "mnt")
	if err := unix.Mount(filepath.Join(work, "dest", "x"), mnt, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("mount --bind: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("umount %s: %v", mnt, err)
		}
	})
	check("mnt", "dest", true)
	check("mnt/deep", "dest", true)
	check("mnt", "dest/x", true)
	check("mnt", "other", false)
	check("dest", "mnt", false)
	check("dest/x/deep", "mnt", true)
}
