package drives

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestStopFull checks the error of a run a full destination stopped: the
// counts it was given, what is in place flushed, a failed flush said.
func TestStopFull(t *testing.T) {
	var w Watch
	if w.StopFull(Ending{}) != nil {
		t.Fatal("StopFull without a full destination is an error")
	}
	w.Full("big", &os.PathError{Op: "write", Path: "big", Err: syscall.ENOSPC})
	flushed := 0
	end := Ending{Root: t.TempDir(), Copied: 3, Bytes: 10, Total: 5, Flush: func() error { flushed++; return nil }}
	err := w.StopFull(end)
	var f *DestFullError
	if !errors.As(err, &f) || f.Copied != 3 || f.Bytes != 10 || f.Total != 5 || f.At != "big" || f.Root != end.Root || flushed != 1 {
		t.Fatalf("StopFull = %v (%+v), flushed %d; want the counts and one flush", err, f, flushed)
	}
	end.Flush = func() error { return syscall.EIO }
	if err := w.StopFull(end); !errors.As(err, &f) || !errors.Is(err, syscall.EIO) {
		t.Errorf("a failed flush: %v; want it said with the full destination", err)
	}
}

// TestStopGone checks that what is in place is flushed only where the
// destination still answers.
func TestStopGone(t *testing.T) {
	for _, side := range []string{"source", "destination"} {
		flushed := false
		g := &DriveGoneError{Side: side, Root: "/r", Err: syscall.EIO}
		err := StopGone(g, Ending{Kept: 4, Flush: func() error { flushed = true; return nil }})
		if err != g || g.Kept != 4 || flushed != (side == "source") {
			t.Errorf("%s gone: %v, kept %d, flushed %v", side, err, g.Kept, flushed)
		}
	}
}
