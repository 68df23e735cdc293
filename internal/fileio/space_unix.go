//go:build linux || darwin || freebsd

package fileio

import "golang.org/x/sys/unix"

// SpaceOf asks statfs(2) about the filesystem that holds path.
func SpaceOf(path string) (Space, error) {
	var st unix.Statfs_t
	if err := ignoringEINTR(func() error { return unix.Statfs(path, &st) }); err != nil {
		return Space{}, pathErr("statfs", path, err)
	}
	unit := statfsUnit(&st)
	return Space{
		Total: int64(st.Blocks) * unit,
		Free:  int64(st.Bavail) * unit,
		Used:  (int64(st.Blocks) - int64(st.Bfree)) * unit,
		Block: unit,
	}, nil
}
