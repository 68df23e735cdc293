//go:build !linux

package fileio

// MemTotal returns the machine's physical memory in bytes, or 0 when it
// cannot be told (not asked on this platform).
func MemTotal() int64 { return 0 }
