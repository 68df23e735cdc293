//go:build !unix

package digest

import "time"

// archivalCPU is not measured here: the benchmark reports MB/s alone.
func archivalCPU() time.Duration { return 0 }
