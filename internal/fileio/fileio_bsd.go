//go:build darwin || freebsd

package fileio

import (
	"errors"

	"golang.org/x/sys/unix"
)

// oNoatime is 0: darwin and FreeBSD have no open flag that leaves a
// file's access time alone.
const oNoatime = 0

// CopyRange would copy n bytes from src at srcOff to f at dstOff inside the
// kernel. Neither darwin nor FreeBSD offers it through x/sys (FreeBSD 13's
// copy_file_range(2) has no wrapper there yet), so it returns an error that
// IsFallback accepts and the caller copies through user space.
func (f *File) CopyRange(src *File, srcOff, dstOff, n int64) (int64, error) {
	if err := f.faults.inject(OpCopyRange, f.path); err != nil {
		return 0, pathErr("copy_file_range", f.path, err)
	}
	return 0, pathErr("copy_file_range", f.path, ErrUnsupported)
}

// DeviceOf would find the block device that holds path. There is no sysfs
// here to tell a rotational disk or a USB one from an SSD, so the device is
// reported as unknown (its String says so) and the caller picks its default.
func DeviceOf(path string) Device { return Device{unknown: true} }

// IsNoAttr reports whether err says an extended attribute does not exist.
func IsNoAttr(err error) bool { return errors.Is(err, unix.ENOATTR) }

// OpenDirect would open name for reads that bypass the page cache; darwin
// and FreeBSD take that as a hint only, so it returns an error that
// IsFallback accepts and callers read back through DropCache instead.
func OpenDirect(d *Dir, name string) (*File, error) {
	return nil, pathErr("open", d.join(name), ErrUnsupported)
}

// StartWriteback does nothing here: there is no sync_file_range.
func (f *File) StartWriteback(off, n int64) {}

// ReserveDescriptors does nothing here: the descriptor table's growth is
// not known to cost what it costs on Linux.
func ReserveDescriptors(n int) {}
