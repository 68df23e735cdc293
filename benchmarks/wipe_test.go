package main

import (
	"os"
	"path/filepath"
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
