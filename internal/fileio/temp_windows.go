//go:build windows

package fileio

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// CreateTemp creates name in d exclusively (CREATE_NEW, which fails on any
// existing name, a symlink included), open for reading and writing. Windows
// has no mode to give it: the file gets its directory's inherited ACL.
func CreateTemp(d *Dir, name string) (*File, error) {
	return CreateTempMode(d, name, 0o600)
}

// CreateTempMode is CreateTemp; Windows has no permission bits to create a
// file with (Chmod sets the read-only attribute).
func CreateTempMode(d *Dir, name string, perm uint32) (*File, error) {
	p := d.join(name)
	if err := inject(OpCreate, p); err != nil {
		return nil, pathErr("create", p, err)
	}
	h, err := createFile(d.sys(name), windows.GENERIC_READ|windows.GENERIC_WRITE, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL)
	if err != nil {
		return nil, pathErr("create", p, err)
	}
	return &File{f: os.NewFile(uintptr(h), p), path: p, abs: filepath.Join(d.abs, name), writable: true}, nil
}

// OpenTemp opens a temporary left by an earlier run for writing; Windows
// builds do not: it returns an error, and the caller writes afresh.
func OpenTemp(d *Dir, name string) (*File, error) {
	return nil, pathErr("open", d.join(name), errors.ErrUnsupported)
}
