//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestTrash(t *testing.T) {
	work := t.TempDir()
	b := &bench{ctx: context.Background(), start: time.Now(), dstRoot: work, trashDir: filepath.Join(work, "trash"), freeWindow: 200 * time.Millisecond}
	mk := func(name string) string {
		d := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "sub", "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	gone := func(p string) bool { _, err := os.Lstat(p); return os.IsNotExist(err) }

	many := mk("many")
	if err := b.trash(manyFiles, 1<<20, many, filepath.Join(work, "missing")); err != nil {
		t.Fatal(err)
	}
	if !gone(many) {
		t.Errorf("%s is still in place after trash", many)
	}
	if _, err := os.Stat(filepath.Join(b.trashDir, "1", "sub", "f")); err != nil {
		t.Errorf("the trashed tree is not in the trash: %v", err)
	}
	if b.trashBytes != 1<<20 {
		t.Errorf("trash holds %d bytes by count, want %d (a missing directory adds nothing)", b.trashBytes, 1<<20)
	}

	few := mk("few")
	if err := b.trash(manyFiles-1, 1<<20, few); err != nil {
		t.Fatal(err)
	}
	if !gone(few) || !gone(filepath.Join(b.trashDir, "2")) {
		t.Errorf("a tree of few files should be deleted at once, not trashed")
	}
	if !b.freedAt.IsZero() {
		t.Errorf("deleting a few files set freedAt; only emptying the trash should")
	}

	if err := b.emptyTrash(); err != nil {
		t.Fatal(err)
	}
	if !gone(b.trashDir) || b.trashBytes != 0 || b.freedAt.IsZero() {
		t.Fatalf("after emptyTrash: trash gone %v, bytes %d, freedAt %v", gone(b.trashDir), b.trashBytes, b.freedAt)
	}
	start := time.Now()
	if w := b.waitFreed(); w <= 0 || time.Since(start) < w {
		t.Errorf("waitFreed right after emptying returned %v after %v; want a wait of up to the window", w, time.Since(start))
	}
	if w := b.waitFreed(); w != 0 {
		t.Errorf("a second waitFreed waited %v; want none", w)
	}

	b.freeWindow = 0 // a filesystem without the trap: always delete at once
	many = mk("many")
	if err := b.trash(manyFiles*10, 1<<20, many); err != nil {
		t.Fatal(err)
	}
	if !gone(many) || !gone(b.trashDir) {
		t.Errorf("without the trap a tree of many files should be deleted at once")
	}
}
