package mirror

import (
	"errors"
	"fmt"
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
