//go:build unix

package fileio

import (
	"errors"

	"golang.org/x/sys/unix"
)

// IsBadName reports whether err is how a filesystem refuses a name it cannot
// hold, when creating it in a directory known to exist: EINVAL (ntfs-3g
// with windows_names, the kernel's vfat and exfat), EILSEQ, EPERM
// (fusefat) or ENOENT (exfat-fuse).
func IsBadName(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EILSEQ) ||
		errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOENT)
}
