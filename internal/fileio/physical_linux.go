package fileio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The FIEMAP ioctl (linux/fiemap.h), which golang.org/x/sys does not wrap.
const (
	fsIocFiemap = 0xC020660B // _IOWR('f', 11, struct fiemap)

	fiemapExtentUnknown    = 0x2   // the data's place is not known yet
	fiemapExtentDelalloc   = 0x4   // delayed allocation: no place yet (sets unknown too)
	fiemapExtentDataInline = 0x200 // the data lives in the inode, not in blocks of its own
	fiemapExtentNotAligned = 0x100 // the extent shares a block (tail packing): its offset is not a block's
)

// fiemapOne is struct fiemap with room for one struct fiemap_extent.
type fiemapOne struct {
	start, length             uint64
	flags, mapped, count, _   uint32
	logical, physical, extLen uint64
	_                         [2]uint64
	extFlags                  uint32
	_                         [3]uint32
}

// PhysicalStart returns where the file's first data lies on its device, as
// a byte offset the filesystem reports (FIEMAP asking for one extent: one
// ioctl, no flush). It is meant for ordering reads on a disk that seeks, so
// it fails soft: ok is false when the place is unknown, as for a file with
// no data, data kept inside the inode or not yet allocated (delayed
// allocation), or a filesystem without FIEMAP (tmpfs, FUSE, NFS). On a
// device mapper, a RAID or a loop device the offset is the filesystem's
// view of its own device, which is what an order of reads needs.
func (f *File) PhysicalStart() (off int64, ok bool) {
	if f.faults.inject(OpFiemap, f.path) != nil {
		return 0, false
	}
	fm := fiemapOne{length: ^uint64(0), count: 1}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(f.fd), fsIocFiemap, uintptr(unsafe.Pointer(&fm))); errno != 0 {
		return 0, false
	}
	if fm.mapped == 0 || fm.extFlags&(fiemapExtentUnknown|fiemapExtentDelalloc|fiemapExtentDataInline|fiemapExtentNotAligned) != 0 {
		return 0, false
	}
	if fm.physical > uint64(1<<63-1) {
		return 0, false
	}
	return int64(fm.physical), true
}

// PhysicalStart is File.PhysicalStart for the regular file name in d,
// opened (O_NOFOLLOW, O_NONBLOCK) and closed around the one ioctl. Call it
// only for a name an lstat showed to be a regular file: opening a device
// node can have effects of its own.
func PhysicalStart(d *Dir, name string) (off int64, ok bool) {
	f, err := openAt(d, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return f.PhysicalStart()
}
