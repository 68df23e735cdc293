//go:build windows

package fileio

import (
	"io"
	"syscall"

	"golang.org/x/sys/windows"
)

// Path returns the path the file was opened as (for messages).
func (f *File) Path() string { return f.path }

func (f *File) handle() windows.Handle { return windows.Handle(f.f.Fd()) }

// Close closes the file.
func (f *File) Close() error {
	if f.f == nil {
		return nil
	}
	return f.f.Close()
}

// Read reads up to len(p) bytes; it returns 0, nil at end of file.
func (f *File) Read(p []byte) (int, error) {
	if err := inject(OpRead, f.path); err != nil {
		return 0, pathErr("read", f.path, err)
	}
	if f.f == nil {
		return 0, pathErr("read", f.path, syscall.EISDIR)
	}
	n, err := f.f.Read(p)
	if err == io.EOF {
		return 0, nil
	}
	if err != nil {
		return 0, osErr("read", f.path, err)
	}
	return n, nil
}

// ReadAt reads up to len(p) bytes at off; it returns 0, nil at end of file.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := inject(OpRead, f.path); err != nil {
		return 0, pathErr("read", f.path, err)
	}
	if f.f == nil {
		return 0, pathErr("read", f.path, syscall.EISDIR)
	}
	n, err := f.f.ReadAt(p, off)
	if err == io.EOF {
		return n, nil
	}
	if err != nil {
		return 0, osErr("read", f.path, err)
	}
	return n, nil
}

// WriteAt writes all of p at off.
func (f *File) WriteAt(p []byte, off int64) error {
	if f.f == nil {
		return pathErr("write", f.path, syscall.EISDIR)
	}
	p, ferr := injectWrite(f.path, p)
	if len(p) > 0 {
		if _, err := f.f.WriteAt(p, off); err != nil {
			return osErr("write", f.path, err)
		}
	}
	return pathErr("write", f.path, ferr)
}

// Truncate sets the file's length.
func (f *File) Truncate(size int64) error {
	if f.f == nil {
		return pathErr("truncate", f.path, syscall.EISDIR)
	}
	return osErr("truncate", f.path, f.f.Truncate(size))
}

// reopen opens f's file again by its path, with access, and checks that
// the path still names it (a File from Dir.AsFile is reached by path
// alone). Windows checks access when a handle is opened, so this is how a
// file opened for reading gets its attributes set or its data flushed.
func (f *File) reopen(access uint32) (windows.Handle, error) {
	h, err := createFile(sysPath(f.abs), access, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS)
	if err != nil || f.f == nil {
		return h, err
	}
	if same, err := sameFile(h, f.handle()); err != nil || !same {
		windows.CloseHandle(h)
		if err == nil {
			err = errReplaced
		}
		return windows.InvalidHandle, err
	}
	return h, nil
}

// Clone returns an error that IsFallback accepts: block cloning on ReFS
// (FSCTL_DUPLICATE_EXTENTS_TO_FILE) is not used.
func (f *File) Clone(src *File) error {
	if err := inject(OpClone, f.path); err != nil {
		return pathErr("clone", f.path, err)
	}
	return pathErr("clone", f.path, ErrUnsupported)
}

// CopyRange returns an error that IsFallback accepts: Windows has no
// in-kernel copy of a byte range between open files.
func (f *File) CopyRange(src *File, srcOff, dstOff, n int64) (int64, error) {
	if err := inject(OpCopyRange, f.path); err != nil {
		return 0, pathErr("copy_file_range", f.path, err)
	}
	return 0, pathErr("copy_file_range", f.path, ErrUnsupported)
}

// NextData returns an error that IsFallback accepts: holes are not looked
// for on Windows (and Stat never reports a file as sparse there).
func (f *File) NextData(off, size int64) (data, hole int64, err error) {
	return 0, 0, pathErr("seek", f.path, ErrUnsupported)
}

// DropCache returns an error that IsFallback accepts: Windows has no call
// to drop one file's cached pages.
func (f *File) DropCache() error {
	return pathErr("fadvise", f.path, ErrUnsupported)
}

// AdviseSequential does nothing on Windows (the hint exists only as a flag
// to CreateFile).
func (f *File) AdviseSequential() {}

// Prefetch does nothing on Windows: it has no call that starts reading a
// range of an open file into the cache and returns.
func (f *File) Prefetch(off, n int64) {}

// CanPrefetch is false: Prefetch does nothing here, so files are not
// opened ahead of their use.
const CanPrefetch = false
