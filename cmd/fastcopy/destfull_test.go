package main

import (
	"bytes"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestDestFullExit: a run stopped by a full destination exits 3 (some files
// not copied, the others in place) and prints its one error.
func TestDestFullExit(t *testing.T) {
	t.Parallel()
	err := &copyengine.DestFullError{Root: "/media/usb", Copied: 9, Total: 12, Bytes: 45 << 20, Free: 0, Err: syscall.ENOSPC}
	if code := exitCode(err); code != exitSomeFailed {
		t.Errorf("exit %d for %v, want %d", code, err, exitSomeFailed)
	}
	want := `destination full: "/media/usb" has no space left after 9 of 12 files (45.0 MiB); free space: 0 B; make room and rerun: what is in place is kept`
	if got := err.Error(); got != want {
		t.Errorf("error reads\n%s\nwant\n%s", got, want)
	}
	var buf bytes.Buffer
	o := &output{stderr: &buf}
	o.reportError(err, exitCode(err))
	if !strings.Contains(buf.String(), want) {
		t.Errorf("printed %q, want the error", buf.String())
	}
}
