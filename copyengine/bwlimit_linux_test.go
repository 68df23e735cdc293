package copyengine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// A run with a bandwidth limit charges the limiter with every byte of file
// content it reads and writes: what is charged is what the Stats counters
// say was read and written, plus, for a clone or a copy_file_range, the
// bytes the kernel moved (charged as read and as written; Stats counts a
// copy_file_range as written, a clone as neither). Each path is taken by
// one case: the copy loop and the committer's read-back, the read-back of
// a large file as it is written, --checksum's hashing of both sides, a
// duplicate compared byte for byte and linked, copy_file_range in pieces
// of at most the limiter's burst, and clones on a filesystem that has them.
func TestBwLimitCharges(t *testing.T) {
	sizes := map[string]int{"big": 16 << 20, "a/small": 5000, "a/mid": 1<<20 + 17, "empty": 0}

	check := func(t *testing.T, c *copyengine.Charges, st *copyengine.Stats, wantRead, wantWrite int64) {
		t.Helper()
		read, write := c.Totals()
		if read != wantRead || write != wantWrite {
			t.Errorf("charged %d read, %d written; want %d read, %d written (Stats: %d read, %d written)",
				read, write, wantRead, wantWrite, st.BytesRead.Load(), st.BytesWritten.Load())
		}
	}
	// run runs opt with its charges recorded in pieces of piece bytes and
	// its Stats counted.
	run := func(t *testing.T, piece int64, opt copyengine.Options) (*copyengine.Charges, *copyengine.Stats, copyengine.Summary) {
		t.Helper()
		c := &copyengine.Charges{Piece: piece}
		opt.Stats = &copyengine.Stats{}
		copyengine.RecordCharges(&opt, c)
		sum, err := runEngine(t, opt)
		if err != nil {
			t.Fatal(err)
		}
		return c, opt.Stats, sum
	}
	tree := func(t *testing.T, sizes map[string]int) (string, int64) {
		src := t.TempDir()
		var total int64
		seed := int64(1)
		for rel, n := range sizes {
			writeFile(t, filepath.Join(src, rel), pattern(seed, n))
			seed++
			total += int64(n)
		}
		settleSources()
		return src, total
	}

	t.Run("copy and read-back", func(t *testing.T) {
		src, total := tree(t, sizes)
		dst := filepath.Join(t.TempDir(), "dst")
		c, st, _ := run(t, 1<<20, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever})
		// 16 MiB and the rest: each byte read from the source, written,
		// and read back from the device.
		if st.BytesRead.Load() != 2*total || st.BytesWritten.Load() != total {
			t.Fatalf("Stats: %d read, %d written of %d bytes; want the source read and read back once, written once", st.BytesRead.Load(), st.BytesWritten.Load(), total)
		}
		check(t, c, st, 2*total, total)

		// Nothing changed: nothing read or written, nothing charged. With
		// --checksum and no cache both sides are hashed.
		c2, st2, _ := run(t, 1<<20, copyengine.Options{Sources: []string{src}, Dest: dst, Checksum: true})
		check(t, c2, st2, 2*total, 0)
		if st2.BytesRead.Load() != 2*total {
			t.Errorf("--checksum read %d bytes, want both sides, %d", st2.BytesRead.Load(), 2*total)
		}
	})

	t.Run("large file read back as written", func(t *testing.T) {
		src, total := tree(t, map[string]int{"huge": 40 << 20})
		dst := filepath.Join(t.TempDir(), "dst")
		c, st, _ := run(t, 1<<20, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever})
		check(t, c, st, 2*total, total)
		check(t, c, st, st.BytesRead.Load(), st.BytesWritten.Load())
	})

	t.Run("duplicate compared byte for byte", func(t *testing.T) {
		src, _ := tree(t, map[string]int{"one": 300 << 10})
		data, err := os.ReadFile(filepath.Join(src, "one"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(src, "two"), data)
		when := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, n := range []string{"one", "two"} {
			if err := os.Chtimes(filepath.Join(src, n), when, when); err != nil {
				t.Fatal(err)
			}
		}
		dst := filepath.Join(t.TempDir(), "dst")
		c, st, sum := run(t, 1<<20, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever, Dedup: dedup.Hardlink, DedupVerifyBytes: true})
		if sum.Deduped != 1 {
			t.Fatalf("deduplicated %d files, want the duplicate linked", sum.Deduped)
		}
		check(t, c, st, st.BytesRead.Load(), st.BytesWritten.Load())
		// Both sources hashed, one written and read back, the duplicate
		// compared with it (both read), the link read back: 6 reads of it.
		if n := int64(len(data)); st.BytesRead.Load() != 6*n || st.BytesWritten.Load() != n {
			t.Errorf("Stats: %d read, %d written; want %d read, %d written", st.BytesRead.Load(), st.BytesWritten.Load(), 6*n, n)
		}
	})

	t.Run("copy_file_range in pieces", func(t *testing.T) {
		src, total := tree(t, map[string]int{"first": 3 << 20, "second": 2<<20 + 5})
		dst := filepath.Join(t.TempDir(), "dst")
		// No digest needed and no clone on this filesystem: each file is
		// copied by copy_file_range. Stats counts it as written, not read.
		// Whether the filesystem clones or cannot copy_file_range is asked
		// of it first, not read from the run: a run that fell back to
		// read/write here is a failure, not a reason to skip.
		if why := copyRangeOnly(t, filepath.Dir(dst)); why != "" {
			t.Skipf("skipping: %s", why)
		}
		c, st, sum := run(t, 64<<10, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: copyengine.VerifyOff, Jobs: 1, Dedup: dedup.Off})
		if sum.Cloned != 0 || st.BytesRead.Load() != 0 {
			t.Fatalf("on a filesystem that does not clone and has copy_file_range: %d cloned, %d bytes read; want each file copied by copy_file_range (nothing cloned, nothing read)", sum.Cloned, st.BytesRead.Load())
		}
		check(t, c, st, total, total)
		check(t, c, st, st.BytesRead.Load()+total, st.BytesWritten.Load())
		if c.Max > c.Piece {
			t.Errorf("one charge of %d bytes: copy_file_range was called for more than the piece of %d", c.Max, c.Piece)
		}
		sameTree(t, src, dst)
	})

	t.Run("clones", func(t *testing.T) {
		fs := loopfs.Mount(t, reflinkFilesystems[0])
		src := fs.Path("src")
		var total int64
		for rel, n := range map[string]int{"big": 3<<20 + 5, "dir/small": 5000} {
			writeFile(t, filepath.Join(src, rel), pattern(int64(n), n))
			total += int64(n)
		}
		settleSources()
		c, st, sum := run(t, 1<<20, copyengine.Options{Sources: []string{src}, Dest: fs.Path("dst")})
		if sum.Cloned != 2 {
			t.Fatalf("cloned %d files, want 2", sum.Cloned)
		}
		// Cloned (read and written in the kernel), the source read for its
		// digest and the clone read back.
		check(t, c, st, st.BytesRead.Load()+total, st.BytesWritten.Load()+total)
		check(t, c, st, 3*total, total)
	})
}

// copyRangeOnly says why copy_file_range cannot be the primitive a copy
// within dir takes ("" when it is): the filesystem clones (FICLONE is
// tried first), or copy_file_range fails there. It asks the filesystem
// with two files of its own.
func copyRangeOnly(t *testing.T, dir string) string {
	t.Helper()
	probe, err := os.MkdirTemp(dir, "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(probe)
	writeFile(t, filepath.Join(probe, "a"), pattern(1, 64<<10))
	a, err := os.Open(filepath.Join(probe, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.Create(filepath.Join(probe, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := unix.IoctlFileClone(int(b.Fd()), int(a.Fd())); err == nil {
		return "this filesystem clones"
	}
	if n, err := unix.CopyFileRange(int(a.Fd()), nil, int(b.Fd()), nil, 64<<10, 0); err != nil || n <= 0 {
		return fmt.Sprintf("copy_file_range does not work on this filesystem (%d bytes, %v)", n, err)
	}
	return ""
}
