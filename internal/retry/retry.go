package retry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Default is how many times a file whose source fails to read is read
// again from its start before it fails, when Config.Retries is 0.
const Default = 2

// Backoff is the wait before the first retry of a file; each further
// retry of it waits twice as long as the one before, at most BackoffMax.
var (
	Backoff    = 100 * time.Millisecond
	BackoffMax = 2 * time.Second
)

// Config is the policy's whole input.
type Config struct {
	// Retries is the number of retries per file: 0 for Default, negative
	// for none.
	Retries int
}

// Policy is the retry rule of one run.
type Policy struct{ cfg Config }

// New is the policy of cfg.
func New(cfg Config) Policy { return Policy{cfg: cfg} }

// Retries is the number of retries per file the run allows.
func (p Policy) Retries() int {
	switch {
	case p.cfg.Retries < 0:
		return 0
	case p.cfg.Retries == 0:
		return Default
	}
	return p.cfg.Retries
}

// SourceReadError reports whether err is an I/O error in opening or
// reading the source file name in the directory at dirPath: what a flaky
// link gives and a second try may not. A write to the destination, or a
// refusal such as EACCES, is not.
func SourceReadError(err error, dirPath, name string) bool {
	var pe *os.PathError
	if !errors.As(err, &pe) || (pe.Op != "read" && pe.Op != "open") {
		return false
	}
	if pe.Path != filepath.Join(dirPath, name) {
		return false
	}
	switch fileio.Errno(err) {
	case syscall.EIO, syscall.ETIMEDOUT:
		return true
	}
	return false
}

// Wait waits before retry number try (1-based) of a file, or until ctx is
// done (then false).
func (p Policy) Wait(ctx context.Context, try int) bool {
	d := Backoff
	for i := 1; i < try && d < BackoffMax; i++ {
		d *= 2
	}
	d = min(d, BackoffMax)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Again is the note of a retry: after the failure err of try try, the
// file is read again from the start (try+1 of the policy's 1+Retries).
func (p Policy) Again(err error, try int) error {
	return fmt.Errorf("reading again from the start, try %d of %d, after: %w", try+1, p.Retries()+1, err)
}

// Failed is the error of a file whose source read failed on every one of
// its tries.
func Failed(err error, tries int) error {
	if tries <= 1 {
		return err
	}
	return fmt.Errorf("%w (failed %d times)", err, tries)
}
