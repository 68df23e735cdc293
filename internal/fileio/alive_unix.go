//go:build unix

package fileio

import "golang.org/x/sys/unix"

// Answers reports whether the filesystem holding d still answers: fstat and
// fstatfs of d's descriptor. A FUSE filesystem whose driver died fails both
// with ENOTCONN; a disk that was pulled, with EIO or ENODEV. It is not a
// fault-injection point: it is how a failure is judged, not a failure.
func Answers(d *Dir) error {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(d.fd, &st) }); err != nil {
		return pathErr("stat", d.path, err)
	}
	var sfs unix.Statfs_t
	if err := ignoringEINTR(func() error { return unix.Fstatfs(d.fd, &sfs) }); err != nil {
		return pathErr("statfs", d.path, err)
	}
	return nil
}

// StatPath returns the metadata of path, following symlinks: what the name
// the user gave leads to now (another filesystem once the drive was
// unmounted, or nothing).
func StatPath(path string) (Stat, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Stat(path, &st) }); err != nil {
		return Stat{}, pathErr("stat", path, err)
	}
	return statFromUnix(&st), nil
}
