//go:build windows

package fileio

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// Syncfs flushes the whole volume holding d (FlushFileBuffers on the
// volume), which Windows allows only to administrators. Otherwise, and on a
// network share, it returns an error that IsFallback accepts: File.Sync on
// each file is then the way to make data durable.
func Syncfs(d *Dir) error {
	if err := inject(OpSync, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	if err := inject(OpSyncfs, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	return pathErr("syncfs", d.path, flushVolume(d.abs))
}

func flushVolume(p string) error {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return err
	}
	var mount, vol [windows.MAX_PATH + 1]uint16
	if err := windows.GetVolumePathName(u, &mount[0], uint32(len(mount))); err != nil {
		return fmt.Errorf("cannot find the volume to flush (%v): %w", err, ErrUnsupported)
	}
	if err := windows.GetVolumeNameForVolumeMountPoint(&mount[0], &vol[0], uint32(len(vol))); err != nil {
		return fmt.Errorf("no local volume to flush (%v): %w", err, ErrUnsupported)
	}
	// \\?\Volume{GUID}\ names the root directory; without the final
	// backslash it names the volume.
	h, err := createFile(strings.TrimSuffix(windows.UTF16ToString(vol[:]), `\`), windows.GENERIC_WRITE, windows.OPEN_EXISTING, 0)
	if err == nil {
		err = windows.FlushFileBuffers(h)
		windows.CloseHandle(h)
	}
	switch err {
	case windows.ERROR_ACCESS_DENIED:
		return fmt.Errorf("flushing a whole volume needs administrator rights: %w", ErrUnsupported)
	case windows.ERROR_INVALID_FUNCTION, windows.ERROR_NOT_SUPPORTED:
		return fmt.Errorf("this volume cannot be flushed as a whole (%v): %w", err, ErrUnsupported)
	}
	return err
}

// Sync flushes the file's data to stable storage (FlushFileBuffers).
// Windows wants write access for that, so a file opened for reading is
// opened again for writing, its read-only attribute (which refuses write
// access even to the owner) lifted for the time of that open.
func (f *File) Sync() error {
	if err := inject(OpSync, f.path); err != nil {
		return pathErr("sync", f.path, err)
	}
	if f.writable {
		return osErr("sync", f.path, f.f.Sync())
	}
	h, err := f.reopen(windows.GENERIC_WRITE)
	if err == windows.ERROR_ACCESS_DENIED {
		err = f.withAttrHandle(func(ah windows.Handle) error {
			attrs, err := getAttrs(ah)
			if err != nil || attrs&windows.FILE_ATTRIBUTE_READONLY == 0 {
				return windows.ERROR_ACCESS_DENIED
			}
			if err := setAttrs(ah, attrs&^windows.FILE_ATTRIBUTE_READONLY); err != nil {
				return err
			}
			h, err = f.reopen(windows.GENERIC_WRITE)
			if rerr := setAttrs(ah, attrs); err == nil && rerr != nil {
				windows.CloseHandle(h)
				err = rerr
			}
			return err
		})
	}
	if err != nil {
		return pathErr("sync", f.path, err)
	}
	defer windows.CloseHandle(h)
	return pathErr("sync", f.path, windows.FlushFileBuffers(h))
}

// StartWriteback does nothing on Windows.
func (f *File) StartWriteback(off, n int64) {}

// DropRange does nothing on Windows.
func (f *File) DropRange(off, n int64) {}

// FlushPath flushes the data of the regular file at path to stable storage
// (FlushFileBuffers, which wants write access: a file that cannot be opened
// for writing as it is, read-only or held by a program that shares no
// write access, is left alone and the error returned) and returns its stat
// from the handle flushed. It is for a file this process only read, whose
// volume cannot be flushed as a whole (Syncfs needs administrator rights):
// opening it for writing writes nothing and changes none of its times.
func FlushPath(path string) (Stat, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Stat{}, pathErr("flush", path, err)
	}
	h, err := createFile(sysPath(abs), windows.GENERIC_WRITE|windows.FILE_READ_ATTRIBUTES, windows.OPEN_EXISTING, 0)
	if err != nil {
		return Stat{}, pathErr("flush", path, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.FlushFileBuffers(h); err != nil {
		return Stat{}, pathErr("flush", path, err)
	}
	st, err := statHandle(h)
	return st, pathErr("flush", path, err)
}
