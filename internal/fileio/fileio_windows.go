//go:build windows

package fileio

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/windows"
)

// Dir is a directory, named by its path. Windows has no calls relative to
// an open directory, so each name passed to its methods (a single path
// component) is joined to that path, and a symlink or junction is refused
// where the Unix code opens with O_NOFOLLOW. The check and the operation
// are separate calls there, so a directory swapped for a junction between
// the two can redirect the operation: the Unix code has no such window.
type Dir struct {
	path string         // as opened, for messages
	abs  string         // absolute and clean, for the system calls
	lock windows.Handle // the named mutex of Lock, or 0
	// closed: Close was called; a second Close says os.ErrClosed, as the
	// Unix Dir's does, although no handle of this one could be reused.
	closed bool
}

// File is an open file. A File from Dir.AsFile has no handle: its methods
// reach the directory by its path.
type File struct {
	f        *os.File // nil for a directory from Dir.AsFile
	path     string   // for messages
	abs      string   // absolute, to open the file again
	writable bool     // f was opened for writing
}

// ioReparseTagAFUnix marks a Unix domain socket (not in x/sys/windows).
const ioReparseTagAFUnix = 0x80000023

// fileBasicInfo is FILE_BASIC_INFO: times in 100ns units since 1601.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// fileAttributeTagInfo is FILE_ATTRIBUTE_TAG_INFO.
type fileAttributeTagInfo struct {
	FileAttributes uint32
	ReparseTag     uint32
}

// sysPath gives the extended-length form of the absolute path p
// (\\?\C:\... or \\?\UNC\server\share\...), which lifts the MAX_PATH limit
// and leaves names as they are (Win32 would drop trailing dots and spaces
// and turn NUL or CON into devices).
func sysPath(p string) string {
	switch {
	case strings.HasPrefix(p, `\\?\`), strings.HasPrefix(p, `\\.\`):
		return p
	case strings.HasPrefix(p, `\\`):
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + p
}

func createFile(p string, access, disposition, flags uint32) (windows.Handle, error) {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return windows.InvalidHandle, err
	}
	// FILE_SHARE_DELETE lets a file be renamed or removed while it is open,
	// as on Unix; the engine renames temporaries it has just read back.
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	return windows.CreateFile(u, access, share, nil, disposition, flags, 0)
}

// osErr names the display path in an error from the os package, which
// carries the extended-length one.
func osErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *os.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	case errors.As(err, &se):
		err = se.Err
	}
	return pathErr(op, path, err)
}
