package source

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/refusal"
	"github.com/fastcopy/fastcopy/verify"
)

// sideOf writes a source tree under src (a file of 3 MiB, one of three
// bytes) and returns its source side: one directory root, no filters, no
// cache.
func sideOf(t *testing.T, src string) *Side {
	t.Helper()
	for rel, data := range map[string][]byte{"a.bin": bytes.Repeat([]byte("a0123456789"), 3<<20/11), "sub/b.txt": []byte("bee")} {
		writeSeamFile(t, filepath.Join(src, rel), data)
	}
	return NewSide([]Root{{Dir: src, IsDir: true, Side: hashcache.SideOf(src)}}, nil, false, nil, time.Now()).For(nil, 0)
}

func writeSeamFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSideReadChangedSource: a source file that changes while the
// destination of another kind reads it is a failure of that file, never a
// copy of bytes the file did not hold as one version.
func TestSideReadChangedSource(t *testing.T) {
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	side := sideOf(t, src)
	var got error
	err := side.Walk(context.Background(), func(f *File) error {
		if f.Rel != "a.bin" {
			return nil
		}
		_, _, got = side.Read(f, func(p []byte, off int64) error {
			if off == 0 {
				return os.WriteFile(filepath.Join(src, "a.bin"), []byte("changed"), 0o644)
			}
			return nil
		}, make([]byte, verify.BufSize))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got, refusal.ErrSourceChanged) {
		t.Errorf("a.bin rewritten while it was read: %v, want %v", got, refusal.ErrSourceChanged)
	}
}

// TestSideReadReplacedSource: a source name that leads to another
// file by the time it is read (renamed over after the walk saw it) is a
// failure, not a copy of the other file under the walk's stat.
func TestSideReadReplacedSource(t *testing.T) {
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	side := sideOf(t, src)
	var got error
	read := false
	err := side.Walk(context.Background(), func(f *File) error {
		if f.Rel != "sub/b.txt" {
			return nil
		}
		writeSeamFile(t, filepath.Join(src, "sub", "b.new"), []byte("bee"))
		if err := os.Rename(filepath.Join(src, "sub", "b.new"), filepath.Join(src, "sub", "b.txt")); err != nil {
			t.Fatal(err)
		}
		_, _, got = side.Read(f, func(p []byte, off int64) error { read = true; return nil }, make([]byte, verify.BufSize))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got, refusal.ErrSourceChanged) || read {
		t.Errorf("sub/b.txt renamed over after the walk: %v (bytes given to the sink: %v), want %v and none", got, read, refusal.ErrSourceChanged)
	}
}
