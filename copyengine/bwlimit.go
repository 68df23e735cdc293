package copyengine

import "github.com/fastcopy/fastcopy/internal/throttle"

// throttleFor is the --bwlimit meter of a run with options o (package
// throttle says what is charged): nil without a limit.
func throttleFor(o *Options) *throttle.Meter {
	return throttle.New(throttle.Config{BytesPerSec: o.BwLimit, Throttle: o.throttle})
}
