package fileio

import "golang.org/x/sys/unix"

// CreateUnnamed creates a file in d's filesystem that has no name
// (O_TMPFILE): it changes no directory and vanishes when closed. Where the
// filesystem cannot (FUSE, FAT, exFAT) it fails with an error wrapping
// ErrUnsupported.
func CreateUnnamed(d *Dir) (*File, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, ".", unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
		return err
	})
	switch {
	case err == unix.EOPNOTSUPP || err == unix.EISDIR || err == unix.EINVAL:
		return nil, pathErr("open", d.path, ErrUnsupported)
	case err != nil:
		return nil, pathErr("open", d.path, err)
	}
	return &File{faults: d.faults, fd: fd, path: d.path}, nil
}
