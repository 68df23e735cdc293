package copyengine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestVerifyDeviceReadsFromStorage proves that --verify device reads the
// copy back from the device, not from the page cache the copy was just
// written through, and that --verify cache does not.
//
// The measure is the sectors read from the destination's own block device
// (/sys/block/DEV/stat): a filesystem of this test, ext4 on a loop device
// that nothing else reads, so the count is what the run read of its
// destination and nothing else. Page-cache hits count nothing and a
// read-back of dropped pages counts its full length. The sources are on
// another filesystem, so reading them (from the page cache or not) adds
// nothing either. (read_bytes of /proc/self/io, the measure before, counts
// every read the process causes: another test's goroutine, the sources when
// their pages were dropped, page faults of the test binary itself; it once
// made --verify cache look like 1.98 MB of device reads for 4 MiB copied.)
// The loop device is attached with direct I/O, so the data really comes
// from the disk under it rather than from the page cache of the image file
// (without direct I/O the count would still be right for the loop device,
// but that device would be served from host memory). The little that ext4
// metadata adds is far below the margin.
func TestVerifyDeviceReadsFromStorage(t *testing.T) {
	t.Parallel()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 512 << 20, DirectIO: true})
	if !fs.DirectIO() {
		t.Logf("%s fell back to buffered I/O: its reads come from the image file's page cache, but are still counted as device reads", fs.Dev)
	}
	if _, err := deviceReadBytes(fs.Dev); err != nil {
		t.Skipf("skipping: no I/O statistics for %s: %v", fs.Dev, err)
	}
	srcRoot := scratchDir(t)
	if st, err := os.Stat(srcRoot); err == nil {
		if mst, err := os.Stat(fs.Dir); err == nil && sameDev(st, mst) {
			t.Fatalf("the sources (%s) are on the destination's filesystem", srcRoot)
		}
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
			verifyReadsFromStorage(t, fs, filepath.Join(srcRoot, shape.name), shape.name, shape.files, shape.size)
		})
	}
}

// verifyReadsFromStorage copies files x size bytes from src with each
// read-back mode and checks the bytes read from the destination's device.
func verifyReadsFromStorage(t *testing.T, fs *loopfs.FS, src, name string, files, size int) {
	for i := 0; i < files; i++ {
		writeFile(t, filepath.Join(src, fmt.Sprintf("f%02d", i)), pattern(int64(i), size))
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
			before, err := deviceReadBytes(fs.Dev)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: c.mode})
			after, _ := deviceReadBytes(fs.Dev)
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if sum.VerifiedBytes != total {
				t.Fatalf("verified %d bytes, want %d", sum.VerifiedBytes, total)
			}
			read := after - before
			t.Logf("--verify %s: %d bytes read from %s for %d copied", c.mode, read, fs.Dev, total)
			if read < c.min || read > c.max {
				t.Errorf("--verify %s read %d bytes from the device; want between %d and %d", c.mode, read, c.min, c.max)
			}
		})
	}
}

// deviceReadBytes returns the bytes read from the block device dev so far:
// the sectors read of /sys/block/NAME/stat (third field, in units of 512
// bytes whatever the device's sector size).
func deviceReadBytes(dev string) (int64, error) {
	b, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(dev), "stat"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, fmt.Errorf("%s: unexpected stat %q", dev, b)
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	return n * 512, err
}

// sameDev reports whether two files are on one filesystem.
func sameDev(a, b os.FileInfo) bool {
	as, ok1 := a.Sys().(*syscall.Stat_t)
	bs, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && as.Dev == bs.Dev
}
