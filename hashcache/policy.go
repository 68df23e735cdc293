package hashcache

import (
	"strings"
	"time"
)

// PolicyFor returns the validity policy for a filesystem type name, as
// fileio.FSType or /proc/self/mountinfo spell it.
//
//   - Local POSIX filesystems (ext2/3/4, xfs, btrfs, f2fs, zfs, bcachefs,
//     tmpfs, ramfs, overlay) and virtiofs and nfs: inode and ctime checked,
//     1ns granularity. (ext3 and small-inode ext4 store whole seconds; a
//     finer granularity than the real one costs at most a re-read, never a
//     wrong hit. The engine measures a destination's real resolution and
//     takes the coarser of the two.)
//   - vfat, msdos: no inode or ctime check (the driver invents inode numbers
//     per mount and has no change time), 2s. Without a ctime check no entry
//     is valid (see Policy.Vouches); these policies keep their granularity
//     for comparing mtimes without the cache.
//   - exfat: the same, 10ms.
//   - ntfs, ntfs3, cifs, smb3: the same, 100ns.
//   - NTFS (Windows' own driver, as fileio.FSType names it there): inode
//     (the file ID) and ctime (its change time) checked, 100ns.
//   - fuseblk (ntfs-3g, exfat-fuse), fuse and fuse.* (sshfs and the like): the
//     same, 2s, the coarsest that any of them stores.
//   - anything else, including "" (not detected): inode and ctime checked, 2s.
//     An unknown filesystem may have unstable inodes or ctimes; checking a
//     field that is not stable costs a re-read, while ignoring one that is
//     can trust a replaced file. The 2s granularity makes the racy window 3s,
//     safe even for a FAT volume the platform could not name; the coarser
//     mtime comparison is covered by that window (see Entry.Racy).
//
// NFS caveat: a client may serve attributes from its cache for up to
// acregmax (60s by default), so a file changed through another client can
// look unchanged for that long; no stat-based cache can see that.
func PolicyFor(fsType string) Policy {
	fine := Policy{CheckInode: true, CheckCtime: true, MtimeGranularity: time.Nanosecond}
	switch fsType {
	case "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "bcachefs",
		"tmpfs", "ramfs", "overlay", "virtiofs", "nfs", "nfs4":
		return fine
	case "vfat", "msdos", "fat":
		return Policy{MtimeGranularity: 2 * time.Second}
	case "exfat":
		return Policy{MtimeGranularity: 10 * time.Millisecond}
	case "ntfs", "ntfs3", "cifs", "smb3", "smb2":
		return Policy{MtimeGranularity: 100 * time.Nanosecond}
	case "NTFS":
		return Policy{CheckInode: true, CheckCtime: true, MtimeGranularity: 100 * time.Nanosecond}
	case "fuseblk", "fuse":
		return Policy{MtimeGranularity: 2 * time.Second}
	}
	if strings.HasPrefix(fsType, "fuse.") {
		return Policy{MtimeGranularity: 2 * time.Second}
	}
	return Policy{CheckInode: true, CheckCtime: true, MtimeGranularity: 2 * time.Second}
}
