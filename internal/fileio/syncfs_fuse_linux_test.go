package fileio_test

import (
	"errors"
	"os"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestSyncfsRemovedDirOnFUSE: a directory removed while it is open is
// still a descriptor of its filesystem, and on FUSE fstatfs of it fails.
// Syncfs must then not answer with the kernel's syncfs, which flushes
// nothing on FUSE and succeeds: it says that no filesystem-wide flush was
// made (ErrUnsupported), so that the caller flushes what it wrote itself.
// The move of a card's files relied on that flush and, after a power cut,
// found every moved file back on the card.
func TestSyncfsRemovedDirOnFUSE(t *testing.T) {
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.ExfatFUSE, Size: 32 << 20})
	p := fs.Path("gone")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(p)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := fileio.Syncfs(d); !errors.Is(err, fileio.ErrUnsupported) {
		t.Fatalf("Syncfs of a removed directory on exfat-fuse: %v; want ErrUnsupported (no flush was made)", err)
	}
}
