//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDestInsideSourceBindMount names DEST through a bind mount of the
// source: the path check sees two unrelated trees, but the bind mount's
// root is the source directory itself (same st_dev and st_ino), so the
// run is refused with exit 2 and writes nothing into the source.
func TestDestInsideSourceBindMount(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("FASTCOPY_REQUIRE_LOOPFS") != "" {
			t.Fatal("needs root for a bind mount (and FASTCOPY_REQUIRE_LOOPFS is set)")
		}
		t.Skip("skipping: needs root for a bind mount")
	}
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, bind := filepath.Join(work, "x", "src"), filepath.Join(work, "bind")
	for _, d := range []string{filepath.Join(src, "sub"), bind} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, filepath.Join(src, "f"), "data")
	writeTestFile(t, filepath.Join(src, "sub", "g"), "more")
	if err := unix.Mount(src, bind, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("mount --bind %s %s: %v", src, bind, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(bind, unix.MNT_DETACH); err != nil {
			t.Errorf("umount %s: %v", bind, err)
		}
	})
	before := names(t, src)
	for _, tc := range []struct{ dest, why string }{
		{filepath.Join(bind, "out"), "destination is inside the source"},
		{filepath.Join(bind, "sub", "deeper", "out"), "destination is inside the source"},
		{bind, "source and destination are the same directory"},
	} {
		r := runBinary(t, bin, 0, 0, "--no-cache", src, tc.dest)
		if r.code != 2 || !strings.Contains(r.stderr, tc.why) || !strings.Contains(r.stderr, "fastcopy: hint: ") {
			t.Errorf("fastcopy %s %s: exit %d, want 2 with %q and a hint:\n%s", src, tc.dest, r.code, tc.why, r.stderr)
		}
		if after := names(t, src); after != before {
			t.Fatalf("fastcopy %s %s wrote into the source:\nbefore %s\nafter  %s", src, tc.dest, before, after)
		}
	}

	// A bind mount of a directory below the source: its ".." leads out of
	// the mount, but its place in its own filesystem is inside the
	// source, so it is refused up front too; reruns never add a level.
	sub := filepath.Join(work, "subbind")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(filepath.Join(src, "sub"), sub, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("mount --bind: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(sub, unix.MNT_DETACH); err != nil {
			t.Errorf("umount %s: %v", sub, err)
		}
	})
	for run := 0; run < 2; run++ {
		r := runBinary(t, bin, 0, 0, "--no-cache", src, filepath.Join(sub, "out"))
		if r.code != 2 || !strings.Contains(r.stderr, "destination is inside the source") {
			t.Errorf("run %d into a bind mount of src/sub: exit %d, want 2 refusing it as inside the source:\n%s", run, r.code, r.stderr)
		}
		if _, err := os.Lstat(filepath.Join(src, "sub", "out", "sub", "out")); err == nil {
			t.Fatalf("run %d copied the destination into itself:\n%s", run, names(t, src))
		}
	}
}

// TestDereferenceIntoDest follows (-L) a symlink in the source to the
// directory that holds both the source and DEST: the walk reaches DEST
// itself as a source directory. It fails that directory by name instead
// of copying the copy into itself, and copies the rest.
func TestDereferenceIntoDest(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	top := t.TempDir()
	src, dst := filepath.Join(top, "src"), filepath.Join(top, "dst")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(src, "f"), "data")
	writeTestFile(t, filepath.Join(top, "other"), "beside")
	if err := os.Symlink(top, filepath.Join(src, "up")); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		r := runBinary(t, bin, 0, 0, "--no-cache", "-L", src, dst)
		if r.code != 3 || !strings.Contains(r.stderr, "cannot copy a directory into itself") || !strings.Contains(r.stderr, `"up/dst"`) {
			t.Errorf("run %d: exit %d, want 3 failing \"up/dst\" as the destination itself:\n%s", run, r.code, r.stderr)
		}
		got := names(t, dst)
		if n := strings.Count(got, "\n"); n > 8 || strings.Contains(got, "fastcopy-tmp") || strings.Contains(got, "up/dst") {
			t.Fatalf("run %d: the destination holds a copy of itself (%d entries):\n%s", run, n, got)
		}
		for _, f := range []string{"f", "up/other"} {
			if _, err := os.Stat(filepath.Join(dst, f)); err != nil {
				t.Errorf("run %d: %s not copied: %v", run, f, err)
			}
		}
	}
}
