package destfs

import (
	"path/filepath"
	"testing"
)

func TestClonesByType(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]bool{"btrfs": true, "xfs": true, "bcachefs": true, "ext4": false, "tmpfs": false, "": false} {
		if got := ClonesByType(typ); got != want {
			t.Errorf("ClonesByType(%q) = %v, want %v", typ, got, want)
		}
	}
}

// TestDryViewOfDestToBeMade: DEST that a dry run would make is judged as
// the filesystem of its nearest existing parent, and no fold is probed.
func TestDryViewOfDestToBeMade(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	var fi Info
	fi.Start(Config{RootPath: filepath.Join(tmp, "new", "dest"), SkipWrite: func() bool { return true }})
	dev, _ := fi.DryDest()
	if dev == 0 {
		t.Error("DryDest of DEST to be made has no device: its parent's was not taken")
	}
	if f := fi.DryFold(nil, nil); !f.NoProbe {
		t.Errorf("DryFold = %+v, want NoProbe", f)
	}
	if note := fi.DryStage(nil, func(string) { t.Error("a note for a filesystem that is not FUSE") }); note != "" {
		t.Errorf("DryStage under a filesystem that is not FUSE: %q", note)
	}
}
