//go:build unix

package fileio

import (
	"os"

	"golang.org/x/sys/unix"
)

// openPresence opens the presence file at path and takes its shared lock.
func openPresence(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
	}
	if err := ignoringEINTR(func() error { return unix.Flock(int(f.Fd()), unix.LOCK_SH) }); err != nil {
		f.Close()
		return nil, pathErr("lock", path, err)
	}
	return f, nil
}

// aloneNow turns f's shared lock exclusive without waiting, and back to
// shared either way (a failed conversion may have dropped the shared
// lock: it is taken again).
func aloneNow(f *os.File) bool {
	fd := int(f.Fd())
	alone := ignoringEINTR(func() error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) }) == nil
	_ = ignoringEINTR(func() error { return unix.Flock(fd, unix.LOCK_SH) })
	return alone
}
