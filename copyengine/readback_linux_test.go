package copyengine_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/copyengine/internal/loopfs"
)

// TestVerifyDeviceReadsFromStorage proves that --verify device reads the
// copy back from the device, not from the page cache the copy was just
// written through, and that --verify cache does not.
//
// The measure is read_bytes of /proc/self/io: the bytes this process caused
// to be read from a block device. The kernel counts a read bio when it is
// submitted (submit_bio), in the context of the task that submitted it, so
// page-cache hits count nothing and a read-back of dropped pages counts its
// full length. The filesystem is ext4 on a loop device attached with direct
// I/O: the bios to the loop device are charged to this process, and the
// loop driver then reads the image file with O_DIRECT, so the data really
// comes from the disk under it rather than from the page cache of the image
// file (without direct I/O the count would still be right for the loop
// device, but that device would be served from host memory). The sources
// are read once before the runs, so they come from the page cache and add
// nothing; the little that ext4 metadata adds is far below the margin.
//
// The test must not run in parallel with others: read_bytes is per process.
func TestVerifyDeviceReadsFromStorage(t *testing.T) {
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 512 << 20, DirectIO: true})
	if !fs.DirectIO() {
		t.Logf("%s fell back to buffered I/O: its reads come from the image file's page cache, but are still counted as device reads", fs.Dev)
	}
	if _, err := readBytes(); err != nil {
		t.Skipf("skipping: no I/O accounting in this kernel: %v", err)
	}
	// Small files are read back in batches after a flush (those up to
	// 1 MiB asked for ahead, several at once); large ones while they are
	// written, through O_DIRECT.
	for _, shape := range []struct {
		name        string
		files, size int
	}{
		{"tiny", 256, 16 << 10},
		{"small", 16, 4 << 20},
		{"large", 2, 40 << 20},
	} {
		t.Run(shape.name, func(t *testing.T) {
			verifyReadsFromStorage(t, fs, shape.name, shape.files, shape.size)
		})
	}
}

// verifyReadsFromStorage copies files x size bytes with each read-back mode
// and checks the bytes this process read from the device.
func verifyReadsFromStorage(t *testing.T, fs *loopfs.FS, name string, files, size int) {
	src := fs.Path("src-" + name)
	for i := 0; i < files; i++ {
		writeFile(t, filepath.Join(src, fmt.Sprintf("f%02d", i)), pattern(int64(i), size))
	}
	// Flush the sources and read them once: they stay in the page cache,
	// clean, and the runs read them from there.
	syncDir(t, fs.Dir)
	for i := 0; i < files; i++ {
		if _, err := os.ReadFile(filepath.Join(src, fmt.Sprintf("f%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	warm, _ := readBytes()
	for i := 0; i < files; i++ {
		_, _ = os.ReadFile(filepath.Join(src, fmt.Sprintf("f%02d", i)))
	}
	if again, _ := readBytes(); again-warm > int64(size) {
		t.Skipf("skipping: the sources do not stay in the page cache (%d bytes read from the device to reread them)", again-warm)
	}

	total := int64(files * size)
	for _, c := range []struct {
		mode     copyengine.VerifyMode
		min, max int64 // bounds on the bytes read from the device
	}{
		{copyengine.VerifyDevice, total, 2 * total},
		{copyengine.VerifyCache, 0, total / 16},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			dst := fs.Path("dst-" + name + "-" + string(c.mode))
			before, err := readBytes()
			if err != nil {
				t.Fatal(err)
			}
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: c.mode})
			after, _ := readBytes()
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if sum.VerifiedBytes != total {
				t.Fatalf("verified %d bytes, want %d", sum.VerifiedBytes, total)
			}
			read := after - before
			t.Logf("--verify %s: %d bytes read from the device for %d copied", c.mode, read, total)
			if read < c.min || read > c.max {
				t.Errorf("--verify %s read %d bytes from the device; want between %d and %d", c.mode, read, c.min, c.max)
			}
		})
	}
}

// readBytes returns read_bytes of /proc/self/io.
func readBytes() (int64, error) {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "read_bytes: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no read_bytes in /proc/self/io")
}

// syncDir flushes the filesystem that holds dir.
func syncDir(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
}
