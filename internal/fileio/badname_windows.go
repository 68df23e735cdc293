//go:build windows

package fileio

import (
	"errors"

	"golang.org/x/sys/windows"
)

// IsBadName reports whether err is how Windows refuses a name it cannot
// hold.
func IsBadName(err error) bool { return errors.Is(err, windows.ERROR_INVALID_NAME) }
