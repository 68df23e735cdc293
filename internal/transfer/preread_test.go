package transfer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

func TestReadSource(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, "f"), old, old); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	want := verify.Sum{Lo: 1}
	job := func(n int64) *PrereadJob {
		return &PrereadJob{St: st, BufLen: 64,
			Open:   func() (*fileio.File, error) { return d.Open("f", false) },
			Stream: func(*fileio.File) (verify.Sum, int64, error) { return want, n, nil }}
	}
	f, pre, err := ReadSource(context.Background(), job(5))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if pre.Sum != want || pre.N != 5 || !pre.Whole {
		t.Errorf("preread %+v", pre)
	}
	if _, _, err := ReadSource(context.Background(), job(4)); !errors.Is(err, ErrChanged) {
		t.Errorf("a short read: %v, want ErrChanged", err)
	}
}
