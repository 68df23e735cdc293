//go:build !linux

package hashcache

import "errors"

// syncAll is Linux's sync(2) for the cold-cache benchmarks, which drop the
// page cache through /proc and so run on Linux only.
func syncAll() error { return errors.New("cold-cache benchmarks run on Linux only") }
