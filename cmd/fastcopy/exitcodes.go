package main

import (
	"context"
	"errors"

	"github.com/fastcopy/fastcopy/copyengine"
)

// Exit codes. They are listed in every command's help (exitHelp), in the
// README and in docs/cli.md.
const (
	exitOK          = 0   // everything copied (or nothing needed copying)
	exitFatal       = 1   // the run could not proceed (I/O error on the destination, ...), or --mhl's generation or --bag's tag files could not be written
	exitUsage       = 2   // bad arguments or a refused request; nothing was written
	exitSomeFailed  = 3   // the run finished, some files failed; the others are in place
	exitMismatch    = 4   // a file read back different from its source, or was replaced while it was placed; named, not vouched for
	exitLocked      = 5   // another fastcopy holds the destination (or the hash cache)
	exitNotKept     = 6   // --strict: every file is in place and verified, but the destination did not keep everything
	exitMaxDelete   = 7   // --max-delete: --delete would remove more than allowed; the copy is done, nothing was deleted
	exitRotten      = 8   // done, but rot was found on the destination device (--scrub, --link-dest): named, and copied again where the source could
	exitInterrupted = 130 // interrupted (Ctrl-C, SIGTERM); temporaries were removed, but for large files' (kept to resume)
)

const exitHelp = `EXIT STATUS
  0    done: every file is in place and verified
  1    fatal error: the run could not go on (a drive that went away is named;
       what was already in place is kept); with --mhl, also: the copy is done
       but its ASC MHL generation could not be written; with --bag, its
       bag's tag files
  2    usage error or refused request: nothing was written
  3    some files failed (listed); all others are in place. A destination
       that fills up stops the run early, at the first file that does not fit.
       With --move, also: sources kept whose extended attributes or ACLs the
       destination could not keep
  4    verification failed for some files: they were not put in place, or
       another writer replaced them under their name as they were placed
  5    the destination or the hash cache is in use by another fastcopy;
       nothing was written, not even a missing parent of DEST
  6    with --strict: every file is in place and verified, but the destination
       could not keep something (hard links, symlinks, owners, modes, ACLs,
       xattrs: the "not kept" warnings say what)
  7    --max-delete: the copy is done and durable, but --delete would remove
       more than allowed, so nothing was deleted (-n lists what would go)
  8    done, but rot was found: a DEST file (--scrub) or a --link-dest
       file whose bytes on the device changed under an unchanged stat; each
       is named, and a DEST file was copied again from its source (one
       whose source no longer holds its digest fails instead: exit 3).
       Every file is in place and verified; the device may be failing
  130  interrupted: nothing half-copied is left under a final name; the
       hidden temporary of a large file is kept for the rerun to resume
  With --also, the worst of the destinations' statuses (in the order 2,
  130, 1, 5, 4, 3, 8, 7, 6, 0); a destination refused on its own once the
  run has started (not enough free space) counts as 3.
`

// errNotKept is the outcome of a --strict run that succeeded but whose
// destination could not keep everything the source has (exit 6).
var errNotKept = errors.New("the destination did not keep everything the source has (--strict)")

// usageError marks a command-line mistake (exit 2).
type usageError struct{ error }

func exitCode(err error) int {
	var refusal *copyengine.RefusalError
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, new(destRefused)):
		return exitSomeFailed
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &refusal), errors.As(err, &usage):
		return exitUsage
	case errors.Is(err, copyengine.ErrLocked): // the hash cache's too: one sentinel
		return exitLocked
	case errors.Is(err, copyengine.ErrMismatch):
		return exitMismatch
	case errors.Is(err, copyengine.ErrSomeFailed):
		return exitSomeFailed
	case errors.Is(err, errRotten):
		return exitRotten
	case errors.Is(err, errNotKept):
		return exitNotKept
	case errors.Is(err, copyengine.ErrMaxDelete):
		return exitMaxDelete
	}
	return exitFatal
}
