package copyengine

import (
	"errors"
	"fmt"
)

// ErrSomeFailed is returned by Run when the run finished but at least one
// entry could not be copied; Summary.Failures names them.
var ErrSomeFailed = errors.New("some files could not be copied")

// ErrMismatch is returned by Run when at least one file read back different
// from its source twice; nothing was renamed into place for it.
var ErrMismatch = errors.New("verification failed")

// ErrLocked is returned by Run when another fastcopy is writing to the same
// destination.
var ErrLocked = errors.New("destination is locked by another fastcopy")

// ErrTooLarge is the per-file error of a regular file larger than the
// destination's filesystem holds (FAT: 4 GiB - 1 byte); the file is refused
// before any byte of it is written.
var ErrTooLarge = errors.New("file too large for the destination")

// RefusalError is a request refused before anything was written: a missing
// source, a destination inside its source, and the like.
type RefusalError struct {
	Path string // the path the refusal is about
	Msg  string // what is wrong
	Hint string // what to do
}

func (e *RefusalError) Error() string { return fmt.Sprintf("%q: %s", e.Path, e.Msg) }

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
