//go:build unix

package fileio

import "golang.org/x/sys/unix"

// CreateTemp creates name in d exclusively (O_EXCL|O_NOFOLLOW) with mode 0600,
// open for reading and writing.
func CreateTemp(d *Dir, name string) (*File, error) { return CreateTempMode(d, name, 0o600) }

// CreateTempMode is CreateTemp with the permission bits perm (less the
// umask, or as d's default ACL decides; see Dir.Inherit).
func CreateTempMode(d *Dir, name string, perm uint32) (*File, error) {
	p := d.join(name)
	if err := d.faults.inject(OpCreate, p); err != nil {
		return nil, pathErr("create", p, err)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm&0o777)
		return err
	})
	if err != nil {
		return nil, pathErr("create", p, err)
	}
	return &File{faults: d.faults, fd: fd, path: p}, nil
}

// OpenTemp opens the existing file name in d, a temporary left by an earlier
// run, for reading and writing. A symlink is not followed (ELOOP), and
// nothing that would block at open (a FIFO put there) blocks; the caller
// checks through the descriptor what it opened.
func OpenTemp(d *Dir, name string) (*File, error) {
	p := d.join(name)
	if err := d.faults.inject(OpOpen, p); err != nil {
		return nil, pathErr("open", p, err)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &File{faults: d.faults, fd: fd, path: p}, nil
}
