//go:build unix

package fileio

import "golang.org/x/sys/unix"

// Lock takes an exclusive advisory lock on the directory d. It returns
// ErrLocked at once when another process holds it.
func Lock(d *Dir) error {
	err := ignoringEINTR(func() error { return unix.Flock(d.fd, unix.LOCK_EX|unix.LOCK_NB) })
	if err == unix.EWOULDBLOCK {
		return ErrLocked
	}
	return pathErr("lock", d.path, err)
}

// LockShared takes a shared advisory lock on the directory d: any number of
// them coexist, none with Lock. It returns ErrLocked at once when another
// process holds Lock.
func LockShared(d *Dir) error {
	err := ignoringEINTR(func() error { return unix.Flock(d.fd, unix.LOCK_SH|unix.LOCK_NB) })
	if err == unix.EWOULDBLOCK {
		return ErrLocked
	}
	return pathErr("lock", d.path, err)
}
