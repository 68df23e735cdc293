package source

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
	s := NewShare(2, 64<<20)
	var wg sync.WaitGroup
	sums := make([]verify.Sum, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, verify.BufSize)
			sum, n, err := verify.Stream(s.Reader(1<<i, f, &st), st.Size, false, buf, nil)
			if err != nil || n != st.Size {
				t.Errorf("run %d: %d bytes, %v", i, n, err)
			}
			sums[i] = sum
			s.Pass(1<<i, &st)
		}()
	}
	wg.Wait()
	want := verify.Bytes(data)
	if sums[0] != want || sums[1] != want {
		t.Errorf("digests %v %v, want %v", sums[0], sums[1], want)
	}
	if got := s.HandedTo(1) + s.HandedTo(2); got != st.Size {
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
	s := NewShare(2, 3<<20)
	s.stall = 50 * time.Millisecond
	buf := make([]byte, verify.BufSize)
	var peak int64
	r := s.Reader(1, f, &st)
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
	s.Leave(2)
	s.Pass(1, &st)
	if s.held != 0 || len(s.files) != 0 {
		t.Errorf("%d bytes and %d files held after the other run ended", s.held, len(s.files))
	}
}

// TestShareChangedFileNotShared: two runs whose stats of a file differ
// (it changed between them) read it each for themselves.
func TestShareChangedFileNotShared(t *testing.T) {
	t.Parallel()
	f, st, _ := shareFile(t, 2<<20)
	s := NewShare(2, 64<<20)
	later := st
	later.Ctime++
	buf := make([]byte, verify.BufSize)
	if _, _, err := verify.Stream(s.Reader(1, f, &st), st.Size, false, buf, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := verify.Stream(s.Reader(2, f, &later), later.Size, false, buf, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.HandedTo(2); got != 0 {
		t.Errorf("%d bytes of the file as it was handed to a run that saw it changed", got)
	}
}

// TestShareRetargetedFileNotShared: with -L, both runs stat a name that
// is a symbolic link while it points to one file; between their opens it
// is pointed at another file of the same size and times, so one run reads
// the old file and the other the new one, each under the identity of the
// stat both made. Neither file changed, so the run holding the old one
// passes its own check (fstat of its descriptor against its stat): it must
// not be handed bytes read from the new one, or it places a file made of
// the old file's first bytes and the new one's last, equal to neither, as
// verified.
func TestShareRetargetedFileNotShared(t *testing.T) {
	t.Parallel()
	const half = verify.BufSize
	dir := t.TempDir()
	oldData := bytes.Repeat([]byte{'o'}, 2*half)
	newData := bytes.Repeat([]byte{'n'}, 2*half)
	mtime := time.Now().Add(-time.Hour)
	for name, data := range map[string][]byte{"a": oldData, "b": newData} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "f")
	if err := os.Symlink("a", link); err != nil {
		t.Fatal(err)
	}
	windowsSymlinkMade(t, link)
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	oldF, err := d.Open("f", true) // run 1 opens the file as stat'ed
	if err != nil {
		t.Fatal(err)
	}
	defer oldF.Close()
	st, err := oldF.Stat() // what both runs' walks saw
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b", link+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link+".new", link); err != nil {
		t.Fatal(err)
	}
	newF, err := d.Open("f", true) // run 2 opens what it points to now
	if err != nil {
		t.Fatal(err)
	}
	defer newF.Close()

	s := NewShare(2, 64<<20)
	r1, r2 := s.Reader(1, oldF, &st), s.Reader(2, newF, &st)
	got := make([]byte, 2*half)
	p := make([]byte, half)
	if _, err := r1.ReadFull(got[:half], 0); err != nil { // run 1 reads the first half
		t.Fatal(err)
	}
	if _, err := r2.ReadFull(p, 0); err != nil { // run 2 takes it
		t.Fatal(err)
	}
	if _, err := r2.ReadFull(p, half); err != nil { // and reads the second half
		t.Fatal(err)
	}
	if _, err := r1.ReadFull(got[half:], half); err != nil { // run 1 gets it
		t.Fatal(err)
	}
	after, err := oldF.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if Changed(&st, &after) {
		t.Fatal("run 1's own check sees its file changed: this scenario does not need the share to go wrong")
	}
	if !bytes.Equal(got, oldData) {
		t.Errorf("run 1, whose source held still by its own check, got %d bytes of another file (%d handed to it)",
			bytes.Count(got, []byte{'n'}), s.HandedTo(1))
	}
}

// TestSharePassedBounded: one run walks ahead of another through files it
// leaves alone (unchanged on its destination: the common incremental
// copy), and the other has not reached them yet. What the share keeps of
// those files, that the first run is done with them, must stay bounded: a
// tree of ten million files, one destination's walk ahead of the other's,
// must not cost the share a record per file.
func TestSharePassedBounded(t *testing.T) {
	t.Parallel()
	s := NewShare(2, 64<<20)
	const n = 1 << 18
	for i := range n {
		st := fileio.Stat{Dev: 1, Ino: uint64(i + 1), Size: 4096, Mtime: 1, Ctime: 1}
		s.Pass(1, &st)
	}
	const bound = 1 << 16 // a few megabytes of records
	if len(s.files) > bound {
		t.Errorf("%d files recorded as passed by one run, want at most %d", len(s.files), bound)
	}
}

// TestShareQueueBounded: run 1 keeps a file's first bytes for run 2, which
// is slow to take them (it copies a large file to a slow drive); meanwhile
// run 1 reads file after file that run 2 then passes (unchanged on its
// destination). Those bytes are freed as run 2 passes them, and what the
// share holds of them must be freed too, not kept queued behind the bytes
// run 2 has not taken yet.
func TestShareQueueBounded(t *testing.T) {
	t.Parallel()
	f, st, _ := shareFile(t, 4096)
	s := NewShare(2, 64<<20)
	p := make([]byte, 4096)
	if _, err := s.Reader(1, f, &st).ReadFull(p, 0); err != nil { // kept for run 2, not taken
		t.Fatal(err)
	}
	const n = 1 << 17
	for i := range n {
		other := st
		other.Ino += uint64(i + 1) // file after file (the descriptor's bytes serve for all)
		r := &sharedRead{s: s, id: 1, key: keyOf(&other), f: f}
		if _, err := r.ReadFull(p, 0); err != nil {
			t.Fatal(err)
		}
		s.Pass(1, &other)
		s.Pass(2, &other) // run 2 leaves it alone
	}
	if s.held != 4096 {
		t.Fatalf("%d bytes held, want the first file's 4096", s.held)
	}
	const bound = 1 << 16
	if len(s.queue) > bound {
		t.Errorf("%d chunks queued, %d of them freed, want at most %d", len(s.queue), len(s.queue)-1, bound)
	}
}
