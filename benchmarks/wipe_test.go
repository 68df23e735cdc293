package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRemoveTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, p := range []string{"a/b/c/f1", "a/b/f2", "a/f3", "d/f4", "f5"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a/b", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty/deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(dir); err != nil {
		t.Fatalf("removeTree: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists after removeTree (%v)", dir, err)
	}
	if err := removeTree(dir); err != nil {
		t.Errorf("removeTree of a missing directory: %v; want nil, as os.RemoveAll", err)
	}
}

func TestDiscardMount(t *testing.T) {
	const table = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard,resv_strict
30 22 0:26 / /tmp rw,nosuid shared:5 - tmpfs tmpfs rw
31 22 7:0 / /var/tmp/img rw,relatime shared:6 - ext4 /dev/loop0 rw
32 22 7:1 / /mnt/d rw,relatime shared:7 - xfs /dev/loop1 rw,attr2,discard,inode64
`
	for dir, want := range map[string]string{
		"/var/tmp/fastcopy-bench/dst": "/",
		"/tmp/x":                      "",
		"/var/tmp/img/dst":            "",
		"/var/tmp/imgx/dst":           "/",
		"/mnt/d":                      "/mnt/d",
	} {
		if got := discardMountIn(strings.NewReader(table), dir); got != want {
			t.Errorf("discardMountIn(%q) = %q, want %q", dir, got, want)
		}
	}
}
