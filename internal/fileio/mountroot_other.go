//go:build !linux

package fileio

// IsMountRoot reports whether the entry name of d is the root of a mount.
// Only Linux tells (statx); elsewhere callers compare st_dev with the
// parent directory's, which finds a mount of another filesystem.
func IsMountRoot(d *Dir, name string) bool { return false }
