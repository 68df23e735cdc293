//go:build !linux

package hashcache

// FSType returns "" on this platform: no filesystem detection yet, so
// PolicyFor gives the conservative policy for an unknown filesystem.
func FSType(path string) (string, error) { return "", nil }
