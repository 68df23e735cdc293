//go:build linux

package fileio_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestPhysicalStart checks, on real ext4 and xfs filesystems, that the
// offset PhysicalStart reports is where the file's first data lies: the
// loop device holds the file's first bytes there (read with O_DIRECT, past
// every cache). A file that begins with a hole is placed by its first data;
// an empty file and a file on tmpfs (no FIEMAP) have no known place.
func TestPhysicalStart(t *testing.T) {
	for _, typ := range []string{"ext4", "xfs"} {
		t.Run(typ, func(t *testing.T) {
			fs := loopfs.Mount(t, loopfs.Config{Type: typ, Size: 320 << 20})
			d, err := fileio.OpenDir(fs.Dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()

			dense := pattern(256<<10, 1)
			holed := pattern(64<<10, 2)
			writeFlushed(t, filepath.Join(fs.Dir, "first"), dense, 0)
			writeFlushed(t, filepath.Join(fs.Dir, "second"), dense[:8192], 0)
			writeFlushed(t, filepath.Join(fs.Dir, "holed"), holed, 1<<20)
			writeFlushed(t, filepath.Join(fs.Dir, "empty"), nil, 0)

			seen := map[int64]string{}
			for name, want := range map[string][]byte{"first": dense, "second": dense[:8192], "holed": holed} {
				off, ok := fileio.PhysicalStart(d, name)
				if !ok {
					t.Fatalf("%s: place unknown on %s", name, typ)
				}
				if prev, dup := seen[off]; dup {
					t.Fatalf("%s and %s both at %d", name, prev, off)
				}
				seen[off] = name
				if got := deviceBytes(t, fs.Dev, off, len(want)); !bytes.Equal(got, want) {
					t.Fatalf("%s: the device at %d does not hold the file's first data", name, off)
				}
				f, err := d.Open(name, false)
				if err != nil {
					t.Fatal(err)
				}
				foff, fok := f.PhysicalStart()
				f.Close()
				if !fok || foff != off {
					t.Fatalf("%s: File.PhysicalStart = %d, %v; PhysicalStart(d) = %d", name, foff, fok, off)
				}
			}
			if off, ok := fileio.PhysicalStart(d, "empty"); ok {
				t.Fatalf("empty file placed at %d", off)
			}
			if off, ok := fileio.PhysicalStart(d, "missing"); ok {
				t.Fatalf("missing file placed at %d", off)
			}
		})
	}
	t.Run("tmpfs", func(t *testing.T) {
		fs := loopfs.Tmpfs(t, 16<<20)
		writeFlushed(t, filepath.Join(fs.Dir, "f"), pattern(8192, 3), 0)
		d, err := fileio.OpenDir(fs.Dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if off, ok := fileio.PhysicalStart(d, "f"); ok {
			t.Fatalf("tmpfs has no FIEMAP, yet the file is placed at %d", off)
		}
	})
}

// pattern returns n bytes that differ in every 8-byte word and between tags.
func pattern(n int, tag byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i/8) ^ byte(i/2048)*31 ^ tag*85 ^ byte(i%8)
	}
	return b
}

// writeFlushed writes data at offset at of a new file and flushes it, so that
// its blocks are allocated and on the device.
func writeFlushed(t *testing.T, path string, data []byte, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 {
		if _, err := f.WriteAt(data, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// deviceBytes reads n bytes of dev at off with O_DIRECT.
func deviceBytes(t *testing.T, dev string, off int64, n int) []byte {
	t.Helper()
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := fileio.AlignedBuffer((n + 4095) &^ 4095)
	if _, err := unix.Pread(fd, buf, off); err != nil {
		t.Fatalf("reading %s at %d: %v", dev, off, err)
	}
	return buf[:n]
}
