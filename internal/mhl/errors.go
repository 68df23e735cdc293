package mhl

import (
	"errors"
	"fmt"
)

// ErrNoHistory is returned by Load when the folder has no ascmhl folder.
var ErrNoHistory = errors.New("no ASC MHL history (no ascmhl folder)")

// ErrTampered is returned (wrapped in a *ChainError) when a generation file
// does not match the C4 ID its chain (or a parent generation's reference)
// records for it, or is missing.
var ErrTampered = errors.New("the ASC MHL history does not match its chain")

// ChainError names the generation file that fails its chain.
type ChainError struct {
	Path string // the generation file
	Msg  string
}

func (e *ChainError) Error() string { return fmt.Sprintf("%q: %s", e.Path, e.Msg) }

// Unwrap makes errors.Is(err, ErrTampered) hold.
func (e *ChainError) Unwrap() error { return ErrTampered }

// FormatError is returned when a generation or chain file cannot be parsed.
type FormatError struct {
	Path string
	Err  error
}

func (e *FormatError) Error() string { return fmt.Sprintf("%q is not ASC MHL: %v", e.Path, e.Err) }

// Unwrap returns the parse error.
func (e *FormatError) Unwrap() error { return e.Err }
