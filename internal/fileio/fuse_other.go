//go:build !linux

package fileio

// IsFUSE reports whether d is on a FUSE filesystem; only Linux tells.
func IsFUSE(d *Dir) bool { return false }
