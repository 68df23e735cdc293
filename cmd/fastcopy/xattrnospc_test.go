//go:build linux

package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestXattrTooLargeExit: a source with a 12 KiB user.* attribute onto
// ext4, whose setxattr answers ENOSPC (an entry's attributes must fit in
// one block there), and another small file. Both are copied, the run
// exits 0 with the "not kept: extended attributes" warning (6 with
// --strict), as for any metadata the destination cannot keep, and says
// nothing of a full destination.
func TestXattrTooLargeExit(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	// tmpfs holds attributes up to the kernel's 64 KiB; the test's
	// directories may lie on an ext4 that does not.
	src := loopfs.Tmpfs(t, 8<<20).Path("src")
	writeTestFile(t, filepath.Join(src, "clip.mov"), strings.Repeat("frame ", 10000))
	writeTestFile(t, filepath.Join(src, "notes.txt"), "small file\n")
	val := make([]byte, 12<<10)
	if _, err := rand.Read(val); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(filepath.Join(src, "clip.mov"), "user.big", val, 0); err != nil {
		t.Fatal(err)
	}
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	for _, c := range []struct {
		dest  string
		flags []string
		code  int
	}{
		{"plain", nil, 0},
		{"strict", []string{"--strict"}, 6},
	} {
		dst := fs.Path(c.dest)
		r := runBinary(t, bin, 0, 0, append(c.flags, "--no-cache", src+"/", dst)...)
		if r.code != c.code || strings.Contains(r.stderr, "destination full") {
			t.Errorf("%v: exit %d, want %d and no full destination:\n%s%s", c.flags, r.code, c.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "fastcopy: warning: not kept: extended attributes: ") || !strings.Contains(r.stderr, "user.big") {
			t.Errorf("%v: no warning that user.big was not kept:\n%s", c.flags, r.stderr)
		}
		if !strings.Contains(r.stdout, "copied 2 files") {
			t.Errorf("%v: summary %q; want both files copied", c.flags, r.stdout)
		}
		for _, name := range []string{"clip.mov", "notes.txt"} {
			want, _ := os.ReadFile(filepath.Join(src, name))
			if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(got) != string(want) {
				t.Errorf("%v: %s not copied as the source (%v)", c.flags, name, err)
			}
		}
	}
}
