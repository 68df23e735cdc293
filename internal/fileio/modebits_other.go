//go:build !windows

package fileio

// ModeBits is the part of a mode a file here keeps: all of it (on Windows
// only the read-only attribute).
const ModeBits = 0o7777
