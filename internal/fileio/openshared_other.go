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

// FlushPath is for Windows, whose volumes only administrators may flush
// as a whole: Syncfs serves here.
func FlushPath(path string) (Stat, error) {
	return Stat{}, pathErr("flush", path, ErrUnsupported)
}

// SetBtime is for Windows: elsewhere fastcopy reads no creation time
// (Stat.Btime is 0), so it sets none.
func SetBtime(d *Dir, name string, btime int64) error {
	return pathErr("setbtime", d.join(name), ErrUnsupported)
}
