package copyengine

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// ErrSomeFailed is returned by Run when the run finished but at least one
// entry could not be copied; Summary.Failures names them.
var ErrSomeFailed = errors.New("some files could not be copied")

// ErrMismatch is returned by Run when at least one file read back different
// from its source twice; nothing was renamed into place for it.
var ErrMismatch = errors.New("verification failed")

// ErrLocked is returned (wrapped) by Run when another fastcopy is writing
// to the same destination, or into a directory above or below it. It is
// fileio.ErrLocked, the one sentinel for a lock another process holds: the
// hash cache's (hashcache.ErrLocked) is the same, so one errors.Is answers
// for both.
var ErrLocked = fileio.ErrLocked

// errDestLocked is ErrLocked in the words a destination's messages use.
var errDestLocked error = lockedMsg("destination is locked by another fastcopy")

// lockedMsg is ErrLocked with a message of its own.
type lockedMsg string

func (m lockedMsg) Error() string { return string(m) }
func (m lockedMsg) Unwrap() error { return ErrLocked }

// ErrTooLarge is the per-file error of a regular file larger than the
// destination's filesystem holds (FAT: 4 GiB - 1 byte); the file is refused
// before any byte of it is written.
var ErrTooLarge = errors.New("file too large for the destination")

// RefusalError is a request refused before anything was written: a missing
// source, a destination inside its source, an option Check does not
// accept, and the like.
type RefusalError struct {
	Path string // the path (or the option's value) the refusal is about; "" for none
	Msg  string // what is wrong
	Hint string // what to do
}

func (e *RefusalError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return fmt.Sprintf("%q: %s", e.Path, e.Msg)
}

// MismatchError describes a file whose read-back digest differs from its
// source's, or (Cause set) a file that is not the one read back.
type MismatchError struct {
	Path      string
	Want, Got string // hex digests: source, read back
	Cause     string // instead of the digests: what was found
}

func (e *MismatchError) Error() string {
	if e.Cause != "" {
		return "verification failed: " + e.Cause
	}
	return fmt.Sprintf("verification failed: source xxh128 %s, read back %s", e.Want, e.Got)
}

// ErrSourceChanged is the per-file cause when a source's size, mtime or ctime
// moved while it was read, twice.
var ErrSourceChanged = errors.New("source changed during copy")

func refuse(path, msg, hint string) error {
	return &RefusalError{Path: path, Msg: msg, Hint: hint}
}

// ErrText describes err without the path its message repeats, for a
// message that names the path already: the "op path: cause" of the
// *os.PathError or *os.LinkError it wraps is cut to "op: cause", and an
// error that is one is cut to its cause alone. Context wrapped around it
// ("--reflink=always: ", "flushing to stable storage: ") is kept.
func ErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if pe == err {
			return pe.Err.Error()
		}
		return strings.Replace(err.Error(), pe.Error(), pe.Op+": "+pe.Err.Error(), 1)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		if le == err {
			return le.Err.Error()
		}
		return strings.Replace(err.Error(), le.Error(), le.Op+": "+le.Err.Error(), 1)
	}
	return err.Error()
}
