//go:build linux

package fileio

import "golang.org/x/sys/unix"

// fsCasefoldFL is FS_CASEFOLD_FL from linux/fs.h: the directory's names are
// compared case-insensitively (ext4 and f2fs with the casefold feature,
// set by chattr +F on an empty directory and inherited by the ones made in
// it).
const fsCasefoldFL = 0x40000000

// CaseFoldAttr reports whether d carries the casefold attribute. A
// filesystem that folds every name (exFAT, NTFS, FAT) has no such
// attribute; a probe tells those (see copyengine's fold probe).
func CaseFoldAttr(d *Dir) bool {
	flags, err := unix.IoctlGetUint32(d.fd, unix.FS_IOC_GETFLAGS)
	return err == nil && flags&fsCasefoldFL != 0
}
