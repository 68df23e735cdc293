package copyengine

import "github.com/fastcopy/fastcopy/internal/retry"

// DefaultRetries is how many times a file whose source fails to read (EIO:
// a flaky USB link, a card reader that hiccups) is read again from its
// start before it fails, when Options.Retries is 0 (retry.Default).
const DefaultRetries = retry.Default

// retried counts a retry of rel and reports it (ActRetry) with why, the
// policy's note (retry.Policy.Again).
func (cp *copier) retried(rel string, why error) {
	cp.e.count(func(s *Summary) { s.Retries++ })
	cp.e.emit(Event{Action: ActRetry, Path: rel, Err: why})
}
