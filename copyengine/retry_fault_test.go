//go:build fcfault && linux

package copyengine_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestRetryReadFailsOnce: a source read that fails once with EIO (a flaky
// USB link) and then works costs one retry, reported, and the run succeeds.
func TestRetryReadFailsOnce(t *testing.T) {
	t.Parallel()
	src, _ := faultTree(t)
	dst := filepath.Join(scratchDir(t), "dst")
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "victim"), Nth: 1, Err: syscall.EIO})
	var ev events
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record}, faults))
	if err != nil {
		t.Fatalf("run: %v (%v)", err, sum.Failures)
	}
	if sum.Retries != 1 {
		t.Errorf("retries %d, want 1", sum.Retries)
	}
	var said []string
	for _, e := range ev.all {
		if e.Action == copyengine.ActRetry {
			said = append(said, e.Path+": "+e.Err.Error())
		}
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "victim: ") || !strings.Contains(said[0], "input/output error") {
		t.Errorf("retry events %q, want one for the victim naming the error", said)
	}
	if n := finalFilesMatch(t, src, dst); n != 4 {
		t.Errorf("%d files in place, want 4", n)
	}
	noTemps(t, dst)
}

// TestRetryReadAlwaysFails: a source that never reads is tried 1+N times
// (N = --retries) and then fails alone.
func TestRetryReadAlwaysFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		retries int // Options.Retries
		tries   int
	}{{0, 1 + copyengine.DefaultRetries}, {3, 4}, {-1, 1}} {
		src, _ := faultTree(t)
		dst := filepath.Join(scratchDir(t), "dst")
		f := &fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "victim"), Err: syscall.EIO}
		faults := fileio.NewFaultSet(f)
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Retries: c.retries}, faults))
		if err != copyengine.ErrSomeFailed {
			t.Fatalf("retries %d: run: %v, want some failed", c.retries, err)
		}
		onlyVictimFailed(t, src, dst, sum, "input/output error")
		if got := f.Calls(); got != c.tries {
			t.Errorf("retries %d: the source was read %d times, want %d", c.retries, got, c.tries)
		}
		if sum.Retries != int64(c.tries-1) {
			t.Errorf("retries %d: %d retries counted, want %d", c.retries, sum.Retries, c.tries-1)
		}
	}
}
