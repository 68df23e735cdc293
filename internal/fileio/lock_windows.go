//go:build windows

package fileio

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// Lock takes an exclusive lock on the directory d until Close or the end of
// the process. It returns ErrLocked at once when another process holds it.
//
// Windows cannot lock a directory, so the lock is a named mutex in the
// Global namespace (seen from every session), named after the directory's
// volume serial number and file index, so that any local path reaching the
// directory names the same lock. Only its existence counts; no thread owns
// it. It does not reach other machines writing to the same share.
func Lock(d *Dir) error {
	if d.lock != 0 {
		return nil
	}
	st, err := d.Stat()
	if err != nil {
		return err
	}
	name, err := windows.UTF16PtrFromString(fmt.Sprintf(`Global\fastcopy-%08x-%016x`, st.Dev, st.Ino))
	if err != nil {
		return pathErr("lock", d.path, err)
	}
	h, err := windows.CreateMutex(nil, false, name)
	switch err {
	case nil:
		d.lock = h
		return nil
	case windows.ERROR_ALREADY_EXISTS:
		windows.CloseHandle(h)
		return ErrLocked
	case windows.ERROR_ACCESS_DENIED:
		return ErrLocked // it exists, made by another user
	}
	return pathErr("lock", d.path, err)
}

// LockShared returns an error wrapping ErrUnsupported: a named mutex has
// no shared form.
func LockShared(d *Dir) error {
	return pathErr("lock", d.path, ErrUnsupported)
}
