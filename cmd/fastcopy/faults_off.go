//go:build !fcfault

package main

import "github.com/fastcopy/fastcopy/copyengine"

// withFaults returns eo: only a binary built with the tag fcfault injects
// faults (FASTCOPY_FAULTS).
func withFaults(eo copyengine.Options) copyengine.Options { return eo }
