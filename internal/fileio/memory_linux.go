package fileio

import "golang.org/x/sys/unix"

// MemTotal returns the machine's physical memory in bytes, or 0 when it
// cannot be told.
func MemTotal() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
