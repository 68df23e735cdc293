package jobs

import (
	"path/filepath"
	"testing"
)

// TestExplicit: a number given is kept, whatever the devices.
func TestExplicit(t *testing.T) {
	dir := t.TempDir()
	if n, why := For(8, dir, dir); n != 8 || why != "set by --jobs" {
		t.Fatalf("For(8) = %d, %q", n, why)
	}
	if n, _ := Choose(0, dir); n < 1 {
		t.Fatalf("Choose(0) = %d", n)
	}
}

// TestDestFSTypeParent: a destination not made yet is on its nearest
// existing parent's filesystem.
func TestDestFSTypeParent(t *testing.T) {
	dir := t.TempDir()
	if got, want := destFSType(filepath.Join(dir, "a", "b")), destFSType(dir); got != want {
		t.Fatalf("destFSType of a path not made = %q, its parent's %q", got, want)
	}
}
