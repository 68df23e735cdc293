package bagit

import (
	"errors"
	"fmt"
)

// ErrCheckNotBag is returned (in a *CheckError) by Check when the folder
// has no bagit.txt.
var ErrCheckNotBag = errors.New("not a BagIt bag (no bagit.txt)")

// ErrCheckFetch is returned (in a *CheckError) by Check when the bag has a
// fetch.txt: some of its payload is still to be downloaded, and fastcopy
// checks only bags that hold all of it.
var ErrCheckFetch = errors.New("the bag lists files to fetch (fetch.txt): it is not complete, and fastcopy fetches nothing")

// ErrCheckNoManifest is returned (in a *CheckError) by Check when the bag
// has no payload manifest (manifest-<alg>.txt).
var ErrCheckNoManifest = errors.New("the bag has no payload manifest (manifest-<alg>.txt)")

// ErrCheckFormat is returned (in a *CheckError) by Check when every
// payload manifest is in an algorithm fastcopy does not compute.
var ErrCheckFormat = errors.New("every payload manifest is in a format fastcopy does not compute")

// CheckError is a bag Check cannot check: the tag file at fault (relative
// to the bag) and what is wrong with it.
type CheckError struct {
	Path string
	Err  error
}

func (e *CheckError) Error() string { return fmt.Sprintf("%q: %v", e.Path, e.Err) }

// Unwrap returns what is wrong.
func (e *CheckError) Unwrap() error { return e.Err }
