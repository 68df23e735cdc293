package records

import (
	"errors"
	"fmt"

	"github.com/fastcopy/fastcopy/internal/refusal"
)

// ErrMHL is returned (wrapped, by an *MHLError) by a run with MHL that
// put its files in place but could not write the ASC MHL generation: the
// copy stands, the history does not record it.
var ErrMHL = errors.New("the ASC MHL history was not written")

// MHLError says why a run's ASC MHL generation was not written.
type MHLError struct {
	Dest string // the destination whose history it is
	Err  error
}

func (e *MHLError) Error() string {
	return fmt.Sprintf("%q: the ASC MHL history was not written: %s", e.Dest, refusal.Text(e.Err))
}

// Unwrap returns ErrMHL and the cause.
func (e *MHLError) Unwrap() []error { return []error{ErrMHL, e.Err} }

// ErrBag is returned (wrapped, by a *BagError) by a run with Bag that put
// its files in place but could not write the bag's tag files: the copy
// stands, the bag does not describe it.
var ErrBag = errors.New("the bag's tag files were not written")

// BagError says why a run's bag was not written.
type BagError struct {
	Bag string
	Err error
}

func (e *BagError) Error() string {
	return fmt.Sprintf("%q: the bag's tag files were not written: %s", e.Bag, refusal.Text(e.Err))
}

// Unwrap returns ErrBag and the cause.
func (e *BagError) Unwrap() []error { return []error{ErrBag, e.Err} }
