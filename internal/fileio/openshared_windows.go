package fileio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// OpenShared is os.OpenFile for a file that other handles may rename or
// remove while this one is open, as on Unix. os.OpenFile opens without
// FILE_SHARE_DELETE, and Windows then refuses every rename or removal of
// the file by anyone ("The process cannot access the file because it is
// being used by another process") until the handle is closed. The hash
// cache needs the Unix behaviour: bbolt holds its files open (and locked)
// while a journal is renamed to its final name, a merged journal removed,
// an unreadable cache moved aside, and `cache clear` removes the cache of
// a run that is still going on.
//
// flag takes os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_CREATE, os.O_EXCL
// and os.O_TRUNC; perm is not used (the file gets its directory's ACL).
func OpenShared(name string, flag int, perm os.FileMode) (*os.File, error) {
	access := uint32(windows.GENERIC_READ)
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access |= windows.GENERIC_WRITE
	}
	var disposition uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		disposition = windows.CREATE_NEW
	case flag&(os.O_CREATE|os.O_TRUNC) == os.O_CREATE|os.O_TRUNC:
		disposition = windows.CREATE_ALWAYS
	case flag&os.O_CREATE != 0:
		disposition = windows.OPEN_ALWAYS
	case flag&os.O_TRUNC != 0:
		disposition = windows.TRUNCATE_EXISTING
	default:
		disposition = windows.OPEN_EXISTING
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	h, err := createFile(sysPath(abs), access, disposition, windows.FILE_ATTRIBUTE_NORMAL)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// RemoveOpen removes the file at path, which other handles (opened with
// OpenShared) may hold. Windows removes such a file only once the last
// handle is closed: until then its name stays taken, and a file created
// under it meanwhile is that file again, gone when it closes. So the file
// is first renamed to a name of its own beside it, which frees path at
// once, and removed under that name (where that fails, it is renamed back
// and the error returned).
func RemoveOpen(path string) error {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	aside := path + ".fastcopy-rm-" + hex.EncodeToString(rnd[:])
	if err := os.Rename(path, aside); err != nil {
		return os.Remove(path) // says why: missing, a directory, or refused
	}
	if err := os.Remove(aside); err != nil {
		_ = os.Rename(aside, path)
		return &os.PathError{Op: "remove", Path: path, Err: errors.Unwrap(err)}
	}
	return nil
}
