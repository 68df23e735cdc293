package retry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRetries(t *testing.T) {
	for _, c := range []struct{ asked, want int }{{0, Default}, {-1, 0}, {5, 5}} {
		if got := New(Config{Retries: c.asked}).Retries(); got != c.want {
			t.Errorf("Retries %d: %d, want %d", c.asked, got, c.want)
		}
	}
}

func TestSourceReadError(t *testing.T) {
	src := filepath.Join(string(filepath.Separator), "src")
	a := filepath.Join(src, "a") // as the walk joins it, on every platform
	eio := &os.PathError{Op: "read", Path: a, Err: syscall.EIO}
	for _, c := range []struct {
		err  error
		name string
		want bool
	}{
		{eio, "a", true},
		{eio, "b", false}, // another file's
		{&os.PathError{Op: "write", Path: a, Err: syscall.EIO}, "a", false},
		{&os.PathError{Op: "open", Path: a, Err: syscall.EACCES}, "a", false},
		{&os.PathError{Op: "open", Path: a, Err: syscall.ETIMEDOUT}, "a", true},
		{errors.New("x"), "a", false},
	} {
		if got := SourceReadError(c.err, src, c.name); got != c.want {
			t.Errorf("%v of %q: %v, want %v", c.err, c.name, got, c.want)
		}
	}
}

func TestWaitCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if New(Config{}).Wait(ctx, 1) {
		t.Error("a cancelled wait reported true")
	}
}

func TestFailed(t *testing.T) {
	err := errors.New("eio")
	if Failed(err, 1) != err {
		t.Error("one try: the error itself")
	}
	if got := Failed(err, 3).Error(); got != "eio (failed 3 times)" || !errors.Is(Failed(err, 3), err) {
		t.Errorf("three tries: %q", got)
	}
}
