//go:build !windows

package fileio

import "os"

// OpenShared is os.OpenFile: a Unix file can be renamed or removed while
// it is open (see the Windows one).
func OpenShared(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// RemoveOpen is os.Remove: removing a Unix file frees its name at once,
// whoever holds it open (see the Windows one).
func RemoveOpen(path string) error { return os.Remove(path) }
