package copyengine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// DefaultRetries is how many times a file whose source fails to read (EIO:
// a flaky USB link, a card reader that hiccups) is read again from its
// start before it fails, when Options.Retries is 0.
const DefaultRetries = 2

// retryBackoff is the wait before the first retry of a file; each further
// retry of it waits twice as long as the one before, at most
// retryBackoffMax.
var (
	retryBackoff    = 100 * time.Millisecond
	retryBackoffMax = 2 * time.Second
)

// retries is the number of retries per file the run allows.
func (cp *copier) retries() int {
	e := cp.e
	switch {
	case e.opt.Retries < 0:
		return 0
	case e.opt.Retries == 0:
		return DefaultRetries
	}
	return e.opt.Retries
}

// sourceReadError reports whether err is an I/O error in opening or reading
// the source file name in sd: what a flaky link gives and a second try may
// not. A write to the destination, or a refusal such as EACCES, is not.
func sourceReadError(err error, sd *fileio.Dir, name string) bool {
	var pe *os.PathError
	if !errors.As(err, &pe) || (pe.Op != "read" && pe.Op != "open") {
		return false
	}
	if pe.Path != filepath.Join(sd.Path(), name) {
		return false
	}
	switch fileio.Errno(err) {
	case syscall.EIO, syscall.ETIMEDOUT:
		return true
	}
	return false
}

// retryWait waits before retry number try (1-based) of a file, or until the
// run is cancelled (then false).
func (cp *copier) retryWait(try int) bool {
	e := cp.e
	d := retryBackoff
	for i := 1; i < try && d < retryBackoffMax; i++ {
		d *= 2
	}
	d = min(d, retryBackoffMax)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-e.ctx.Done():
		return false
	}
}

// retried counts a retry of rel and reports it (ActRetry).
func (cp *copier) retried(rel string, err error, try, of int) {
	e := cp.e
	e.count(func(s *Summary) { s.Retries++ })
	e.emit(Event{Action: ActRetry, Path: rel, Err: fmt.Errorf("reading again from the start, try %d of %d, after: %w", try+1, of+1, err)})
}

// readFailed is the error of a file whose source read failed on every try.
func readFailed(err error, tries int) error {
	if tries <= 1 {
		return err
	}
	return fmt.Errorf("%w (failed %d times)", err, tries)
}
