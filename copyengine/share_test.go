package copyengine

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// shareFile writes a file of n random bytes and opens it, with its stat.
func shareFile(t *testing.T, n int) (*fileio.File, fileio.Stat, []byte) {
	t.Helper()
	data := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(data)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	f, err := d.Open("f", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f, st, data
}

// TestShareHandsOn: of two runs reading one file, each gets every byte
// right, and between them the file is read once: what one read, the
// other took.
func TestShareHandsOn(t *testing.T) {
	t.Parallel()
	f, st, data := shareFile(t, 5<<20+123)
	s := newSourceShare(2, 64<<20)
	var wg sync.WaitGroup
	sums := make([]verify.Sum, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, verify.BufSize)
			sum, n, err := verify.Stream(s.reader(1<<i, f, &st), st.Size, false, buf, nil)
			if err != nil || n != st.Size {
				t.Errorf("run %d: %d bytes, %v", i, n, err)
			}
			sums[i] = sum
			s.pass(1<<i, &st)
		}()
	}
	wg.Wait()
	want := verify.Bytes(data)
	if sums[0] != want || sums[1] != want {
		t.Errorf("digests %v %v, want %v", sums[0], sums[1], want)
	}
	if got := s.handedTo(1) + s.handedTo(2); got != st.Size {
		t.Errorf("%d bytes handed on, want the file's %d once", got, st.Size)
	}
	if s.held != 0 || len(s.files) != 0 {
		t.Errorf("%d bytes and %d files still held after both passed", s.held, len(s.files))
	}
}

// TestShareBounded: a run that never takes what is kept for it (it will
// not read the file, and has not said so) holds the reader back for no
// longer than the stall time, and never makes the share keep more than its
// budget; what it missed is dropped, counted.
func TestShareBounded(t *testing.T) {
	t.Parallel()
	f, st, data := shareFile(t, 12<<20)
	s := newSourceShare(2, 3<<20)
	s.stall = 50 * time.Millisecond
	buf := make([]byte, verify.BufSize)
	var peak int64
	r := s.reader(1, f, &st)
	var got bytes.Buffer
	_, _, err := verify.Stream(r, st.Size, false, buf, func(p []byte, _ int64) error {
		s.mu.Lock()
		peak = max(peak, s.held)
		s.mu.Unlock()
		got.Write(p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Error("the reader got other bytes than the file's")
	}
	if peak > s.budget {
		t.Errorf("%d bytes kept at most, budget %d", peak, s.budget)
	}
	if s.dropped.Load() == 0 {
		t.Error("nothing dropped, yet the other run never took anything")
	}
	// The other run ends: nothing is kept for it any more.
	s.leave(2)
	s.pass(1, &st)
	if s.held != 0 || len(s.files) != 0 {
		t.Errorf("%d bytes and %d files held after the other run ended", s.held, len(s.files))
	}
}

// TestShareChangedFileNotShared: two runs whose stats of a file differ
// (it changed between them) read it each for themselves.
func TestShareChangedFileNotShared(t *testing.T) {
	t.Parallel()
	f, st, _ := shareFile(t, 2<<20)
	s := newSourceShare(2, 64<<20)
	later := st
	later.Ctime++
	buf := make([]byte, verify.BufSize)
	if _, _, err := verify.Stream(s.reader(1, f, &st), st.Size, false, buf, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := verify.Stream(s.reader(2, f, &later), later.Size, false, buf, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.handedTo(2); got != 0 {
		t.Errorf("%d bytes of the file as it was handed to a run that saw it changed", got)
	}
}
