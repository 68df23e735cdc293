//go:build darwin || freebsd

package fileio

import "golang.org/x/sys/unix"

// statfsUnit is the unit of the BSDs' block counts: f_bsize.
func statfsUnit(st *unix.Statfs_t) int64 { return int64(st.Bsize) }
