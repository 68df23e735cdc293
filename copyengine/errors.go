package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// ErrSomeFailed is returned by Run when the run finished but at least one
// entry could not be copied; Summary.Failures names them
// (refusal.ErrSomeFailed).
var ErrSomeFailed = refusal.ErrSomeFailed

// ErrMismatch is returned by Run when at least one file read back different
// from its source twice; nothing was renamed into place for it.
var ErrMismatch = refusal.ErrMismatch

// ErrLocked is returned (wrapped) by Run when another fastcopy is writing
// to the same destination, or into a directory above or below it. It is
// fileio.ErrLocked, the one sentinel for a lock another process holds: the
// hash cache's (hashcache.ErrLocked) is the same, so one errors.Is answers
// for both.
var ErrLocked = refusal.ErrLocked

// ErrTooLarge is the per-file error of a regular file larger than the
// destination's filesystem holds (FAT: 4 GiB - 1 byte); the file is refused
// before any byte of it is written.
var ErrTooLarge = refusal.ErrTooLarge

// RefusalError is a request refused before anything was written: a missing
// source, a destination inside its source, an option Check does not
// accept, and the like (refusal.Error).
type RefusalError = refusal.Error

// MismatchError describes a file whose read-back digest differs from its
// source's, or (Cause set) a file that is not the one read back.
type MismatchError = refusal.Mismatch

// ErrSourceChanged is the per-file cause when a source's size, mtime or ctime
// moved while it was read, twice.
var ErrSourceChanged = refusal.ErrSourceChanged

func refuse(path, msg, hint string) error { return refusal.New(path, msg, hint) }

// ErrText describes err without the path its message repeats (refusal.Text).
func ErrText(err error) string { return refusal.Text(err) }
