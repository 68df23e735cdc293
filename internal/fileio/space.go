package fileio

// Space is what statfs(2) says of a filesystem's size, in bytes.
type Space struct {
	Total int64 // the filesystem's size; 0 when it does not say
	Free  int64 // free to an unprivileged writer (f_bavail)
	Used  int64 // taken (f_blocks - f_bfree)
	Block int64 // the unit of allocation
}

// Known reports whether the filesystem reported its size at all: some FUSE
// drivers (fusefat) report zero blocks, total and free.
func (s Space) Known() bool { return s.Total > 0 && s.Block > 0 }
