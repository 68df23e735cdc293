package copyengine

import "github.com/fastcopy/fastcopy/internal/outcome"

// newFailure is the failure of the file at path with err, for the tests
// that build a summary themselves (memDest).
func newFailure(path string, err error) Failure { return outcome.NewFailure(path, err) }
