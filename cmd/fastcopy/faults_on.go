//go:build fcfault

package main

import (
	"os"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// withFaults attaches to a run the faults FASTCOPY_FAULTS names
// (fileio.ParseFaults), in a binary built with the tag fcfault: the
// scripts' way to inject them into the binary they run.
func withFaults(eo copyengine.Options) copyengine.Options {
	if spec := os.Getenv("FASTCOPY_FAULTS"); spec != "" {
		return copyengine.WithFaults(eo, fileio.NewFaultSet(fileio.ParseFaults(spec)...))
	}
	return eo
}
