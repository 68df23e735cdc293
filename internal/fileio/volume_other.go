//go:build !linux && !windows

package fileio

// IdentifyVolume finds what identifies the volume holding the directory
// path. This platform has no way to it yet: the result never has an ID.
func IdentifyVolume(path string) (VolumeID, error) {
	return VolumeID{Why: "volume identity is not implemented on this platform"}, nil
}
