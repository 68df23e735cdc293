package mirror

import (
	"errors"
	"fmt"

	"github.com/fastcopy/fastcopy/internal/refusal"
)

// ErrMaxDelete is returned by Finish when --delete would remove more
// entries than Config.MaxDelete allows: nothing was deleted (the copy
// itself is done and durable). It is wrapped in a *MaxDeleteError.
var ErrMaxDelete = errors.New("--max-delete: more to delete than allowed")

// MaxDeleteError says how many entries --delete would have removed and the
// bound it exceeded.
type MaxDeleteError struct {
	Planned int64
	Max     int
}

func (e *MaxDeleteError) Error() string {
	if e.Max < 0 {
		return fmt.Sprintf("--delete would remove %d entries and --max-delete allows none: nothing was deleted", e.Planned)
	}
	return fmt.Sprintf("--delete would remove %d entries, more than --max-delete %d: nothing was deleted", e.Planned, e.Max)
}

// Unwrap returns ErrMaxDelete.
func (e *MaxDeleteError) Unwrap() error { return ErrMaxDelete }

// CheckFlags refuses the options that only --delete gives a meaning to
// (--delete-force: force; --max-delete: maxDelete not 0) without it
// (del).
func CheckFlags(del, force bool, maxDelete int) error {
	if force && !del {
		return &refusal.Error{Msg: "--delete-force needs --delete", Hint: "add --delete, or leave --delete-force out"}
	}
	if maxDelete != 0 && !del {
		return &refusal.Error{Msg: "--max-delete needs --delete", Hint: "add --delete, or leave --max-delete out"}
	}
	return nil
}
