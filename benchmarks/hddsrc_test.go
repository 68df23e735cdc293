//go:build linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestPhysOrder: on a real ext4, files written one after another (each
// flushed) lie in the order they were written, whatever their names and
// the order they were created in; the physical-order reader follows that
// order, not the listing's or the inodes', and puts files without data (no
// place) last, by inode.
func TestPhysOrder(t *testing.T) {
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	root := fs.Path("tree")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	// Created in listing order (the inode numbers), written in another.
	created := []string{"a", "b", "c", "empty1", "empty2", "sub/b", "sub/m"}
	for _, rel := range created {
		f, err := os.Create(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write := func(rel string, n int) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(root, rel), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(buf[:n]); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	written := []string{"sub/m", "c", "a", "sub/b", "b"}
	for _, rel := range written {
		write(rel, len(buf))
	}
	ents, err := physOrder(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		rel, _ := filepath.Rel(root, e.path)
		got = append(got, rel)
	}
	want := append(slices.Clone(written), "empty1", "empty2") // the empty files by inode
	if !slices.Equal(got, want) {
		t.Fatalf("physical order %v, want %v", got, want)
	}
}
