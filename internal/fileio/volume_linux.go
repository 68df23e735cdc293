package fileio

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Magic numbers of the filesystems IdentifyVolume treats apart (linux/magic.h).
const (
	magicExt4  = 0xEF53
	magicXFS   = 0x58465342
	magicBtrfs = 0x9123683E
	magicTmpfs = 0x01021994
	magicVfat  = 0x4d44
	magicExfat = 0x2011BAB0
	magicNTFS  = 0x5346544e
	magicNTFS3 = 0x7366746e
)

// ioctl request numbers, spelled out as <linux/fs.h>, <linux/msdos_fs.h>
// and xfs_fs.h define them: _IOR(type, nr, size).
func ior(typ, nr, size uintptr) uintptr { return 2<<30 | size<<16 | typ<<8 | nr }

var (
	fsIocGetFSUUID    = ior(0x15, 0, 17)   // FS_IOC_GETFSUUID, struct fsuuid2 (Linux 6.8)
	xfsIocFSGeometry1 = ior('X', 100, 112) // XFS_IOC_FSGEOMETRY_V1
	fatIocGetVolumeID = ior('r', 0x13, 4)  // FAT_IOCTL_GET_VOLUME_ID (Linux 4.4)
)

// IdentifyVolume finds what identifies the volume holding the directory
// path, measured on Linux 6.18 with loop-mounted images (two volumes of each type
// mounted in turn at one mount point, and one volume mounted again from
// another loop device):
//
//   - ext4 and btrfs: f_fsid, which these filesystems derive from the UUID
//     (btrfs mixes in the subvolume); the same across remounts, different
//     across volumes.
//   - xfs: the UUID from XFS_IOC_FSGEOMETRY (its f_fsid is the device
//     number, the same for two volumes mounted in turn from one device).
//   - vfat: the serial number from FAT_IOCTL_GET_VOLUME_ID (f_fsid is the
//     device number).
//   - any other filesystem that reports its UUID with FS_IOC_GETFSUUID (tmpfs
//     gets a random one per mount, which is right: its files die with it).
//   - exFAT (kernel or exfat-fuse), NTFS (ntfs3 or ntfs-3g), FAT where the
//     ioctl is missing, and any fuseblk mount: the serial number in the boot
//     sector of the block device the mount names, when that device is the
//     directory's st_dev and can be read (root, or the disk group), or else
//     the /dev/disk/by-uuid link that points at that device.
//   - tmpfs on kernels before random UUIDs, and everything else, FUSE
//     filesystems without a block device among them (sshfs, fusefat, whose
//     mounts name no device and report f_fsid 0): no identity.
//
// Two volumes that are block-for-block copies (dd) share an identity, as
// they share their UUID.
func IdentifyVolume(path string) (VolumeID, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return VolumeID{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return VolumeID{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return VolumeID{}, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	dev := uint64(st.Dev)
	magic := uint32(sfs.Type)
	fsid := uint64(uint32(sfs.Fsid.Val[0]))<<32 | uint64(uint32(sfs.Fsid.Val[1]))
	id := func(kind, v string) VolumeID { return VolumeID{Dev: dev, ID: fmt.Sprintf("%s:%x:%s", kind, magic, v)} }
	switch magic {
	case magicExt4, magicBtrfs:
		if fsid != 0 {
			return id("fsid", fmt.Sprintf("%016x", fsid)), nil
		}
	case magicXFS:
		var g [112]byte
		if ioctlPtr(fd, xfsIocFSGeometry1, unsafe.Pointer(&g[0])) == nil && !allZero(g[64:80]) {
			return id("uuid", hex.EncodeToString(g[64:80])), nil
		}
	case magicVfat:
		var v uint32
		if ioctlPtr(fd, fatIocGetVolumeID, unsafe.Pointer(&v)) == nil {
			return id("serial", fmt.Sprintf("%04X-%04X", v>>16, v&0xffff)), nil
		}
	}
	// Not asked of FUSE: a kernel that does not answer FS_IOC_GETFSUUID
	// itself (before Linux 6.8) hands it to the FUSE daemon, which may
	// answer anything.
	var u [17]byte // struct fsuuid2: a length, then up to 16 bytes
	if magic != fuseSuperMagic && ioctlPtr(fd, fsIocGetFSUUID, unsafe.Pointer(&u[0])) == nil && u[0] > 0 && u[0] <= 16 && !allZero(u[1:1+u[0]]) {
		return id("uuid", hex.EncodeToString(u[1:1+u[0]])), nil
	}
	fsType, source := "", ""
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		fsType, source = mountSource(f, dev)
		f.Close()
	}
	switch {
	case magic == magicVfat || magic == magicExfat || magic == magicNTFS || magic == magicNTFS3 ||
		magic == fuseSuperMagic && fsType == "fuseblk":
		if s, ok := deviceSerial(source, dev); ok {
			return id("serial", s), nil
		}
		return VolumeID{Dev: dev, Why: fmt.Sprintf("the serial number of the volume on %q could not be read", source)}, nil
	case magic == magicTmpfs && fsid != 0:
		return id("fsid", fmt.Sprintf("%016x", fsid)), nil
	case magic == fuseSuperMagic:
		return VolumeID{Dev: dev, Why: "a FUSE filesystem without a block device has no volume identity"}, nil
	}
	return VolumeID{Dev: dev, Why: fmt.Sprintf("no volume identity known for filesystem type %#x", magic)}, nil
}

func ioctlPtr(fd int, req uintptr, p unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(p))
	if e != 0 {
		return e
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// mountSource returns the type and source of the first mount of device dev
// in mountinfo.
func mountSource(r io.Reader, dev uint64) (fsType, source string) {
	want := fmt.Sprintf("%d:%d", devMajor(dev), devMinor(dev))
	var found mountLine
	scanMountinfo(r, func(m mountLine) bool {
		if m.dev == want {
			found = m
			return false
		}
		return true
	})
	return found.fsType, found.source
}

// deviceSerial reads the volume serial number of the block device numbered
// dev, which the mount names source: from its boot sector when source is
// that device and can be read, else from the /dev/disk/by-uuid link to it.
func deviceSerial(source string, dev uint64) (string, bool) {
	if filepath.IsAbs(source) {
		if f, err := os.Open(source); err == nil {
			var st unix.Stat_t
			b := make([]byte, 512)
			ok := unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK && uint64(st.Rdev) == dev
			if ok {
				_, err = f.ReadAt(b, 0)
				ok = err == nil
			}
			f.Close()
			if ok {
				if s, ok := bootSerial(b); ok {
					return s, true
				}
			}
		}
	}
	const byUUID = "/dev/disk/by-uuid"
	ents, err := os.ReadDir(byUUID)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		var st unix.Stat_t
		if unix.Stat(filepath.Join(byUUID, e.Name()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK && uint64(st.Rdev) == dev {
			return e.Name(), true
		}
	}
	return "", false
}
