//go:build fcfault

package copyengine

import "github.com/fastcopy/fastcopy/internal/fileio"

// WithFaults returns opt with the faults s injected into the file
// operations of its run. It exists only in builds with the tag fcfault,
// for tests: those of this package, and the command line's, whose binary
// takes faults from FASTCOPY_FAULTS.
func WithFaults(opt Options, s *fileio.FaultSet) Options {
	opt.hooks.faults = s
	return opt
}
