package fileio

import (
	"os"

	"golang.org/x/sys/windows"
)

// openPresence opens the presence file at path and takes its shared lock.
func openPresence(path string) (*os.File, error) {
	f, err := OpenShared(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if f, err = OpenShared(path, os.O_RDONLY, 0); err != nil {
			return nil, err
		}
	}
	if err := lockByte(f, 0); err != nil {
		f.Close()
		return nil, pathErr("lock", path, err)
	}
	return f, nil
}

// lockByte locks the first byte of f with flags (0: shared, waiting).
func lockByte(f *os.File, flags uint32) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
}

func unlockByte(f *os.File) {
	var ol windows.Overlapped
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// aloneNow reports whether f's lock could be exclusive. A lock cannot be
// converted here: the shared one is dropped, an exclusive one tried
// without waiting (and dropped), and the shared one taken again.
func aloneNow(f *os.File) bool {
	unlockByte(f)
	alone := lockByte(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY) == nil
	if alone {
		unlockByte(f)
	}
	_ = lockByte(f, 0)
	return alone
}
