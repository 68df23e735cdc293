package drives_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/internal/drives"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// TestFullVerdict checks that the first failure with no room halts the run
// and is reported, that later ones are its fallout, and that a failure of
// another kind is neither.
func TestFullVerdict(t *testing.T) {
	t.Parallel()
	var w drives.Watch
	other := &os.PathError{Op: "write", Path: "/d/a", Err: syscall.EACCES}
	if v := w.Full("a", other); v != (drives.Verdict{}) || w.Halted() || w.FullErr() != nil {
		t.Fatalf("EACCES: verdict %+v, halted %v, full %v; want none", v, w.Halted(), w.FullErr())
	}
	full := &os.PathError{Op: "write", Path: "/d/b", Err: syscall.ENOSPC}
	if v := w.Full("b", full); v.Fallout || v.Cancel {
		t.Fatalf("the first ENOSPC: verdict %+v, want it reported", v)
	}
	if !w.Halted() {
		t.Fatal("the first ENOSPC did not halt the run")
	}
	if f := w.FullErr(); f == nil || f.At != "b" || !errors.Is(f, syscall.ENOSPC) {
		t.Fatalf("FullErr() = %+v, want the failure of b", f)
	}
	if v := w.Full("c", full); !v.Fallout || v.Cancel {
		t.Fatalf("a second ENOSPC: verdict %+v, want fallout", v)
	}
	if f := w.FullErr(); f.At != "b" {
		t.Errorf("a second ENOSPC moved FullErr to %q", f.At)
	}
}

// TestDestFullIs checks that a full destination counts as some files
// failed, and as a mismatch only when a file also read back different.
func TestDestFullIs(t *testing.T) {
	t.Parallel()
	f := &drives.DestFullError{Root: "/d", Free: -1, Err: syscall.ENOSPC}
	if !errors.Is(f, refusal.ErrSomeFailed) || errors.Is(f, refusal.ErrMismatch) {
		t.Errorf("without a mismatch: Is(ErrSomeFailed) %v, Is(ErrMismatch) %v; want true, false",
			errors.Is(f, refusal.ErrSomeFailed), errors.Is(f, refusal.ErrMismatch))
	}
	f.Mismatch = true
	if !errors.Is(f, refusal.ErrSomeFailed) || !errors.Is(f, refusal.ErrMismatch) {
		t.Error("with a mismatch: not both ErrSomeFailed and ErrMismatch")
	}
}

// TestJudgeGone checks the verdicts on a failure that says a filesystem is
// gone whatever its root answers (ENOTCONN, a dead FUSE driver): the
// destination's cancels the run, once; a source's halts it instead; a
// failure that is no sign of a drive at all is left to be reported. The
// paths are joined with "/", which rootOf looks for, on Windows too.
func TestJudgeGone(t *testing.T) {
	t.Parallel()
	dst, src := t.TempDir(), t.TempDir()
	for _, tt := range []struct {
		side, root string
		cancel     bool
	}{
		{"destination", dst, true},
		{"source", src, false},
	} {
		var w drives.Watch
		w.Add(drives.Root{Side: "destination", Path: dst})
		w.Add(drives.Root{Side: "source", Path: src})
		defer w.Close()
		if v := w.Judge("x", &os.PathError{Op: "open", Path: tt.root + "/x", Err: syscall.EACCES}, true); v != (drives.Verdict{}) {
			t.Fatalf("EACCES: verdict %+v, want none", v)
		}
		dead := &os.PathError{Op: "read", Path: tt.root + "/a", Err: syscall.ENOTCONN}
		v := w.Judge("a", dead, true)
		if !v.Fallout || v.Cancel != tt.cancel {
			t.Fatalf("ENOTCONN under the %s: verdict %+v, want fallout, cancel %v", tt.side, v, tt.cancel)
		}
		g := w.Gone()
		if g == nil || g.Side != tt.side || g.Root != tt.root || g.At != "a" {
			t.Fatalf("ENOTCONN under the %s: Gone() = %+v", tt.side, g)
		}
		if w.Halted() == tt.cancel {
			t.Errorf("%s gone: Halted() = %v", tt.side, w.Halted())
		}
		if v := w.Judge("b", dead, true); !v.Fallout || v.Cancel {
			t.Errorf("a second failure: verdict %+v, want fallout only", v)
		}
	}
}
