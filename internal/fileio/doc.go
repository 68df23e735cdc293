// Package fileio is the only package of fastcopy that makes system calls
// directly. It offers directory handles and file handles whose operations are
// relative to an open directory, so that the engine never resolves a path
// through a symlink it did not mean to follow:
//
//   - Dir.OpenBeneath opens a directory below a root without following any
//     symlink on the way (openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH on
//     Linux, O_NOFOLLOW_ANY on darwin, a component-by-component O_NOFOLLOW
//     walk elsewhere).
//   - CreateTemp creates a file in a Dir with O_CREAT|O_EXCL|O_NOFOLLOW and
//     mode 0600 (CreateTempMode with another mode), so that an existing file,
//     symlink or hard link at that name is never opened or written through
//     (the temporaries, with OpenTemp and CreateUnnamed: temp_*.go).
//     Dir.Inherit tells what such a file takes from its directory (a setgid
//     group, a default ACL) on Linux, and nothing elsewhere.
//   - File offers the data-path primitives: FICLONE (clonefile on darwin),
//     copy_file_range, SEEK_DATA/SEEK_HOLE, posix_fadvise and syncfs where
//     the platform has them, each returning ErrUnsupported where it does not.
//   - FSType, FSName and IdentifyVolume probe the filesystem under a path:
//     its type (statfs, /proc/self/mountinfo), the name people call it by
//     (a boot sector), and what identifies its volume (f_fsid, ioctls, a
//     boot sector's serial, /dev/disk/by-uuid). What to trust of each is
//     hashcache's policy, not theirs. They return "" (no identity) where
//     the platform has no way to tell yet.
//
// A Dir's methods are the operations on the directory and on the entries
// it names: open, list, stat, make, rename, link and remove them, and
// open their Nodes. What is not such an operation takes the Dir as its
// first argument, grouped by what it is for, with the same signature on
// every system:
//
//   - the filesystem that holds it: Answers, IsFUSE, Syncfs, CaseFoldAttr,
//     IsMountRoot, PhysicalStart;
//   - the staging of directories: CanStageDirs, ProbeDirRename,
//     RenameDirNoReplace;
//   - its locks: Lock, LockShared (lock_*.go);
//   - the temporaries made in it: CreateTemp, CreateTempMode, OpenTemp,
//     CreateUnnamed (temp_*.go);
//   - an entry's metadata set by name, never following a symlink: Lchown,
//     Lutimes, Chmod, SetBtime (File and Node set it through a descriptor);
//   - the direct read of the read-back: OpenDirect, with AlignedBuffer and
//     DirectAlign.
//
// Platform code sits in files named by suffix: _unix.go for what all Unix
// systems share, _linux.go, _darwin.go and _freebsd.go for what each has of
// its own, _bsd.go for what darwin and FreeBSD share, and _windows.go for a
// path-based implementation of the same contract (Windows has no calls
// relative to an open directory, so there a check and the call it guards
// are two steps). Each platform file says what it only approximates.
//
// Built with the tag fcfault, the package consults a fault injector before
// each operation (see fault_on.go); the shipped binary carries no such hook.
package fileio
