//go:build !linux

package hashcache

// Identify finds the volume identity of the directory path. This platform
// has no way to it yet: the result always has Volume zero, so the cache
// never vouches for a file here.
func Identify(path string) (VolumeInfo, error) {
	return VolumeInfo{Why: "volume identity is not implemented on this platform"}, nil
}
