package fileio

import "golang.org/x/sys/unix"

// statfsUnit is the unit of Linux's block counts: the fragment size, which
// is the block size on nearly every filesystem.
func statfsUnit(st *unix.Statfs_t) int64 {
	if st.Frsize > 0 {
		return st.Frsize
	}
	return st.Bsize
}
