// Package refusal is the error vocabulary the copy engine and its feature
// packages share: a request refused before anything was written, a file
// that read back different from its source, and the per-file sentinels.
// copyengine re-exports each under its own name, so a caller of the
// library meets one set of errors whichever package raised them.
package refusal

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// ErrLocked is returned (wrapped) when another fastcopy is writing to the
// same destination, or into a directory above or below it. It is
// fileio.ErrLocked, the one sentinel for a lock another process holds.
var ErrLocked = fileio.ErrLocked

// ErrSomeFailed is returned when a run finished but at least one entry
// could not be copied (or, under --move, was kept): the summary names
// them. It is the exit status 3 of the command line.
var ErrSomeFailed = errors.New("some files could not be copied")

// ErrMismatch is returned when a run finished and at least one file read
// back different from its source twice; nothing was renamed into place
// for it.
var ErrMismatch = errors.New("verification failed")

// ErrTooLarge is the per-file error of a regular file larger than the
// destination's filesystem holds (FAT: 4 GiB - 1 byte); the file is refused
// before any byte of it is written.
var ErrTooLarge = errors.New("file too large for the destination")

// ErrSourceChanged is the per-file cause when a source's size, mtime or
// ctime moved while it was read, twice.
var ErrSourceChanged = errors.New("source changed during copy")

// Error is a request refused before anything was written: a missing
// source, a destination inside its source, an option the checks do not
// accept, and the like.
type Error struct {
	Path string // the path (or the option's value) the refusal is about; "" for none
	Msg  string // what is wrong
	Hint string // what to do
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return fmt.Sprintf("%q: %s", e.Path, e.Msg)
}

// New is the refusal of path: what is wrong (msg) and what to do (hint).
func New(path, msg, hint string) error {
	return &Error{Path: path, Msg: msg, Hint: hint}
}

// Mismatch describes a file whose read-back digest differs from its
// source's, or (Cause set) a file that is not the one read back.
type Mismatch struct {
	Path      string
	Want, Got string // hex digests: source, read back
	Cause     string // instead of the digests: what was found
}

func (e *Mismatch) Error() string {
	if e.Cause != "" {
		return "verification failed: " + e.Cause
	}
	return fmt.Sprintf("verification failed: source xxh128 %s, read back %s", e.Want, e.Got)
}

// Locked is ErrLocked with a message of its own.
type Locked string

func (m Locked) Error() string { return string(m) }
func (m Locked) Unwrap() error { return ErrLocked }

// Text describes err without the path its message repeats, for a message
// that names the path already: the "op path: cause" of the *os.PathError
// or *os.LinkError it wraps is cut to "op: cause", and an error that is one
// is cut to its cause alone. Context wrapped around it ("--reflink=always:
// ", "flushing to stable storage: ") is kept.
func Text(err error) string {
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
