//go:build windows

package fileio

import (
	"errors"
	"io/fs"
	"syscall"

	"golang.org/x/sys/windows"
)

// IsNotExist reports whether err says a file does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// IsExist reports whether err says a file already exists.
func IsExist(err error) bool {
	return errors.Is(err, windows.ERROR_FILE_EXISTS) || errors.Is(err, windows.ERROR_ALREADY_EXISTS) ||
		errors.Is(err, syscall.EEXIST)
}

// IsNoSpace reports whether err says the device is full or over quota.
func IsNoSpace(err error) bool {
	switch Errno(err) {
	case windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL, windows.ERROR_DISK_QUOTA_EXCEEDED,
		syscall.ENOSPC, syscall.EDQUOT:
		return true
	}
	return false
}

// IsPermission reports whether err is a permission refusal (including a
// missing privilege, such as the one to create symlinks).
func IsPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD)
}

// IsFallback reports whether err means "this primitive does not work here;
// use the next one": ErrUnsupported, the Windows errors for an unsupported
// or cross-volume request, and the errno values the fault injector uses.
func IsFallback(err error) bool {
	if errors.Is(err, ErrUnsupported) {
		return true
	}
	switch Errno(err) {
	case windows.ERROR_NOT_SUPPORTED, windows.ERROR_INVALID_FUNCTION, windows.ERROR_NOT_SAME_DEVICE,
		windows.ERROR_INVALID_PARAMETER,
		syscall.ENOTSUP, syscall.EOPNOTSUPP, syscall.EXDEV, syscall.EINVAL, syscall.ENOSYS, syscall.ENOTTY, syscall.EBADF:
		return true
	}
	return false
}
