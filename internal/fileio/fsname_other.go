//go:build !linux

package fileio

// FSName returns "" on this platform: no filesystem detection yet.
func FSName(path string) string { return "" }
