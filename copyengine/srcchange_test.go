package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestSourceChangedDuringCopy copies a file that another writer keeps
// changing. Whatever the timing, the file is either copied consistently (its
// copy equals one whole state of the source, and was verified) or fails
// with ErrSourceChanged; a torn copy is never reported as copied.
func TestSourceChangedDuringCopy(t *testing.T) {
	t.Parallel()
	// The writer rewrites the whole file in place, 1 MiB at a time, with one
	// byte value per pass. A copy read during a pass would mix two values;
	// only the size/mtime/ctime check around the read can catch that, as
	// the copy matches the digest computed while it was read.
	t.Run("rewritten", func(t *testing.T) {
		const size = 32 << 20
		src := filepath.Join(scratchDir(t), "src")
		writeFile(t, filepath.Join(src, "other"), pattern(50, 70000))
		live := filepath.Join(src, "live")
		writeFile(t, live, bytes.Repeat([]byte{1}, size))
		stop := keepWriting(t, live, func(f *os.File, pass int) error {
			chunk := bytes.Repeat([]byte{byte(pass%250 + 2)}, 1<<20)
			for off := int64(0); off < size; off += int64(len(chunk)) {
				if _, err := f.WriteAt(chunk, off); err != nil {
					return err
				}
			}
			return nil
		})
		dst := filepath.Join(scratchDir(t), "dst")
		var ev events
		sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
		passes := stop()
		t.Logf("the writer made %d passes during the run", passes)
		checkChanged(t, dst, sum, err, &ev, func(got []byte) bool {
			return len(got) == size && bytes.Count(got, got[:1]) == size
		})
	})

	// The writer appends 4 KiB records. Reads stop at the size stat gave,
	// so a copy holds a prefix; it must be a whole number of records.
	t.Run("appended", func(t *testing.T) {
		const rec = 4096
		src := filepath.Join(scratchDir(t), "src")
		writeFile(t, filepath.Join(src, "other"), pattern(51, 70000))
		live := filepath.Join(src, "live")
		writeFile(t, live, pattern(52, 2048*rec))
		stop := keepWriting(t, live, func(f *os.File, pass int) error {
			st, err := f.Stat()
			if err != nil || st.Size() > 128<<20 {
				return err // enough: stop growing
			}
			_, err = f.WriteAt(pattern(int64(pass), rec), st.Size())
			return err
		})
		dst := filepath.Join(scratchDir(t), "dst")
		var ev events
		sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
		passes := stop()
		t.Logf("the writer appended %d records during the run", passes)
		final, rerr := os.ReadFile(live)
		if rerr != nil {
			t.Fatal(rerr)
		}
		checkChanged(t, dst, sum, err, &ev, func(got []byte) bool {
			return len(got) >= 2048*rec && len(got)%rec == 0 && bytes.HasPrefix(final, got)
		})
	})
}

// keepWriting opens path and calls pass with it over and over from another
// goroutine until the returned stop is called; stop returns the number of
// passes made.
func keepWriting(t *testing.T, path string, pass func(f *os.File, n int) error) (stop func() int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var n int
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ; ; n++ {
			select {
			case <-done:
				return
			default:
			}
			if werr = pass(f, n); werr != nil {
				return
			}
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		f.Close()
		if werr != nil {
			t.Fatalf("writer: %v", werr)
		}
		return n
	}
}

// checkChanged checks the outcome for the changing file "live": failed with
// ErrSourceChanged and absent, or copied, verified, and whole by the test's
// idea of a whole state. The other file is copied either way.
func checkChanged(t *testing.T, dst string, sum copyengine.Summary, err error, ev *events, whole func([]byte) bool) {
	t.Helper()
	noTemps(t, dst)
	if got, rerr := os.ReadFile(filepath.Join(dst, "other")); rerr != nil || len(got) != 70000 {
		t.Errorf("the unchanging file was not copied: %v", rerr)
	}
	got, rerr := os.ReadFile(filepath.Join(dst, "live"))
	if ferr, failed := ev.failures()["live"]; failed {
		t.Logf("the changing file failed: %v", ferr)
		if !errors.Is(ferr, copyengine.ErrSourceChanged) {
			t.Errorf("the changing file failed with %v, want ErrSourceChanged", ferr)
		}
		if !errors.Is(err, copyengine.ErrSomeFailed) {
			t.Errorf("Run returned %v, want ErrSomeFailed", err)
		}
		if rerr == nil {
			t.Error("the file that failed exists under its final name")
		}
		return
	}
	t.Logf("the changing file was copied: %d bytes", len(got))
	if err != nil || rerr != nil {
		t.Fatalf("Run returned %v, reading the copy %v", err, rerr)
	}
	if sum.Copied != 2 || sum.Verified != 2 {
		t.Errorf("copied %d, verified %d; want both files copied and verified", sum.Copied, sum.Verified)
	}
	if !whole(got) {
		t.Errorf("the copy (%d bytes) is torn: it is no whole state of the source", len(got))
	}
}
