//go:build !linux && !windows

package fileio

// FSType returns "" on this platform: no filesystem detection yet, so
// hashcache.PolicyFor gives the conservative policy for an unknown
// filesystem.
func FSType(path string) (string, error) { return "", nil }
