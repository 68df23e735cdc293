package fileio

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// ErrLocked is returned by Lock (and LockShared) when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// ReadFull reads into buf from off until buf is full or the file ends, and
// returns the bytes read.
func (f *File) ReadFull(buf []byte, off int64) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.ReadAt(buf[n:], off+int64(n))
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// Errno returns the system error number inside err, or 0.
func Errno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// describe gives a short name for a file type, for messages.
func describe(mode uint32) string {
	switch mode & ModeType {
	case ModeDir:
		return "directory"
	case ModeSymlink:
		return "symlink"
	case ModeRegular:
		return "file"
	case ModeFIFO:
		return "fifo"
	case ModeSocket:
		return "socket"
	case ModeChar, ModeBlock:
		return "device"
	}
	return fmt.Sprintf("file of type %o", mode&ModeType)
}

// Describe names the type of mode for messages ("file", "symlink", ...).
func Describe(mode uint32) string { return describe(mode) }

// DirectAlign is the alignment of buffers, offsets and lengths for reads
// from a file opened with OpenDirect.
const DirectAlign = 4096

// AlignedBuffer returns n bytes starting at a multiple of DirectAlign.
func AlignedBuffer(n int) []byte {
	b := make([]byte, n+DirectAlign)
	skip := DirectAlign - int(uintptr(unsafe.Pointer(&b[0]))%DirectAlign)
	if skip == DirectAlign {
		skip = 0
	}
	return b[skip : skip+n : skip+n]
}

// IsCrossDevice reports whether err says that a link or rename would cross
// filesystems (EXDEV): the caller copies instead.
func IsCrossDevice(err error) bool { return errors.Is(err, syscall.EXDEV) }
