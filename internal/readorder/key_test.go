package readorder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

func TestKeyOf(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "empty"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Lstat("empty")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Order{Disk, Inode} {
		if k := KeyOf(o, d, "empty", &st); k.Known || k.Ino != st.Ino {
			t.Errorf("%s order, an empty file: %+v", o, k)
		}
	}
	st.Size = 1 // asked of the filesystem only in disk order
	if k := KeyOf(Inode, d, "empty", &st); k.Known || k.Phys != 0 {
		t.Errorf("inode order asked for a place: %+v", k)
	}
}
