package fileio

import (
	"os"

	"golang.org/x/sys/unix"
)

// FSName names the filesystem holding the directory path as people call it
// ("exFAT", "NTFS", "FAT32", "FAT", "ext4", ...), for messages: a FUSE
// block-device mount (fuseblk: exfat-fuse, ntfs-3g) is named by the boot
// sector of its device when that can be read, else "fuseblk". "" when
// nothing is known.
func FSName(path string) string {
	fsType, err := FSType(path)
	if err != nil {
		return ""
	}
	if k := fsKindOf(fsType); k != "" {
		return k
	}
	if fsType != "fuseblk" {
		return fsType
	}
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return fsType
	}
	dev := uint64(st.Dev)
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fsType
	}
	_, source := mountSource(f, dev)
	f.Close()
	b, ok := bootSector(source, dev)
	if !ok {
		return fsType
	}
	if k := bootKind(b); k != "" {
		return k
	}
	return fsType
}

// bootSector reads the first sector of the block device source, when it is
// the device numbered dev.
func bootSector(source string, dev uint64) ([]byte, bool) {
	f, err := os.Open(source)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK || uint64(st.Rdev) != dev {
		return nil, false
	}
	b := make([]byte, 512)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, false
	}
	return b, true
}
