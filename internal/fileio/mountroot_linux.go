package fileio

import "golang.org/x/sys/unix"

// IsMountRoot reports whether the entry name of d, not following a
// symlink, is the root of a mount: a mount point, including a bind mount
// of a directory of the same filesystem (which st_dev cannot tell).
func IsMountRoot(d *Dir, name string) bool {
	var stx unix.Statx_t
	if err := unix.Statx(d.fd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_BASIC_STATS, &stx); err != nil {
		return false
	}
	return stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}
