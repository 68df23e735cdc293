package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// island is a run of data in a sparse file.
type island struct {
	off  int64
	data []byte
}

// TestSparse copies sparse files, one of more than 4 GiB, with a few
// islands of data: the copies stay sparse, verify, and hash to the digest
// of their whole logical content, holes read as zeros.
func TestSparse(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	cases := []struct {
		name    string
		size    int64
		islands []island
	}{
		{"ends-in-data", 4*gib + 1<<20 + 7, []island{
			{0, pattern(10, 64<<10)},
			{gib + 12345, pattern(11, 100000)}, // not block-aligned
			{3 * gib, pattern(12, 1<<20)},
			{4*gib + 1<<20 + 7 - 5000, pattern(13, 5000)},
		}},
		{"ends-in-hole", 256<<20 + 3, []island{
			{100 << 20, pattern(14, 3<<20)},
		}},
	}
	src := filepath.Join(scratchDir(t), "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string]verify.Sum{}
	for _, c := range cases {
		f, err := os.Create(filepath.Join(src, c.name))
		if err != nil {
			t.Fatal(err)
		}
		h := verify.NewHasher()
		var pos int64
		for _, is := range c.islands {
			if _, err := f.WriteAt(is.data, is.off); err != nil {
				t.Fatal(err)
			}
			h.WriteZeros(is.off - pos)
			h.Write(is.data)
			pos = is.off + int64(len(is.data))
		}
		h.WriteZeros(c.size - pos)
		want[c.name] = h.Sum()
		if err := f.Truncate(c.size); err != nil {
			t.Fatal(err)
		}
		f.Close()
		var st fileio.Stat
		if st = statOf(t, filepath.Join(src, c.name)); !st.Sparse() {
			t.Skipf("skipping: the filesystem of %s does not keep holes (%d blocks for %d bytes)", src, st.Blocks, st.Size)
		}
	}

	dst := filepath.Join(scratchDir(t), "dst")
	// --reflink never: a clone would keep the holes without the data path
	// having to.
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 2 || sum.Verified != 2 {
		t.Errorf("copied %d, verified %d; want both sparse files copied and read back", sum.Copied, sum.Verified)
	}
	for _, c := range cases {
		p := filepath.Join(dst, c.name)
		st := statOf(t, p)
		if st.Size != c.size {
			t.Errorf("%s: %d bytes, want %d", c.name, st.Size, c.size)
		}
		var data int64
		for _, is := range c.islands {
			data += int64(len(is.data))
		}
		// Each island may round out to whole blocks at both ends.
		if alloc := st.Blocks * 512; alloc > data+int64(len(c.islands))*2*64<<10 {
			t.Errorf("%s: %d bytes allocated for %d bytes of data: the holes were filled", c.name, alloc, data)
		}
		if got := hashFile(t, p, st); got != want[c.name] {
			t.Errorf("%s: copy hashes to %s, its logical content to %s", c.name, verify.Hex(got), verify.Hex(want[c.name]))
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range c.islands {
			got := make([]byte, len(is.data))
			if _, err := f.ReadAt(got, is.off); err != nil || !bytes.Equal(got, is.data) {
				t.Errorf("%s: the data at %d differs (%v)", c.name, is.off, err)
			}
		}
		f.Close()
	}
}

// TestEmptyAndProcFiles: a 0-byte file copies as one, and a file that
// reports size 0 yet has content (procfs) is copied with its content.
func TestEmptyAndProcFiles(t *testing.T) {
	t.Parallel()
	dir := scratchDir(t)
	writeFile(t, filepath.Join(dir, "src", "empty"), nil)
	sum, err := runEngine(t, copyengine.Options{Sources: []string{filepath.Join(dir, "src")}, Dest: filepath.Join(dir, "dst")})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if st, err := os.Lstat(filepath.Join(dir, "dst", "empty")); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		t.Errorf("empty file: %v, %v", st, err)
	}
	if sum.Copied != 1 {
		t.Errorf("copied %d, want the empty file", sum.Copied)
	}

	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("skipping the procfs case: %v", err)
	}
	dst := filepath.Join(dir, "status")
	sum, err = runEngine(t, copyengine.Options{Sources: []string{"/proc/self/status"}, Dest: dst})
	if err != nil {
		t.Fatalf("Run on /proc/self/status: %v (failures %v)", err, sum.Failures)
	}
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	// The content moves as the process runs; these lines do not.
	if !strings.HasPrefix(string(got), "Name:") || !strings.Contains(string(got), "\nPid:\t"+strconv.Itoa(os.Getpid())+"\n") {
		t.Errorf("copy of /proc/self/status holds %d bytes: %q", len(got), got)
	}
	if sum.Copied != 1 || sum.Bytes != int64(len(got)) || sum.VerifiedBytes != int64(len(got)) {
		t.Errorf("copied %d, %d bytes, %d verified; want 1 file of %d bytes, verified", sum.Copied, sum.Bytes, sum.VerifiedBytes, len(got))
	}
}

func statOf(t *testing.T, path string) fileio.Stat {
	t.Helper()
	d, err := fileio.OpenDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Lstat(filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// hashFile is the digest of path's logical content, holes read as zeros.
// It reads only the data runs the file's hole map shows (the engine reads
// every byte, so this is a reading of its own), which keeps the 4 GiB case
// quick.
func hashFile(t *testing.T, path string, st fileio.Stat) verify.Sum {
	t.Helper()
	d, err := fileio.OpenDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, err := d.Open(filepath.Base(path), false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := verify.NewHasher()
	buf := make([]byte, verify.BufSize)
	var pos int64
	for pos < st.Size {
		data, hole, err := f.NextData(pos, st.Size)
		if err != nil {
			t.Fatalf("hashing %s: %v", path, err)
		}
		h.WriteZeros(data - pos)
		for pos = data; pos < hole; {
			n, err := f.ReadFull(buf[:min(int64(len(buf)), hole-pos)], pos)
			if err != nil || n == 0 {
				t.Fatalf("hashing %s: %d bytes at %d, %v", path, n, pos, err)
			}
			h.Write(buf[:n])
			pos += int64(n)
		}
	}
	return h.Sum()
}
