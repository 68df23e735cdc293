package fileio

import (
	"errors"
	"io/fs"
)

// File type bits of Stat.Mode, as in POSIX stat(2). They are the same numbers
// on every platform fastcopy builds for, so the engine can compare modes
// without importing a platform package.
const (
	ModeType    = 0o170000
	ModeSocket  = 0o140000
	ModeSymlink = 0o120000
	ModeRegular = 0o100000
	ModeBlock   = 0o060000
	ModeDir     = 0o040000
	ModeChar    = 0o020000
	ModeFIFO    = 0o010000
	ModeSetuid  = 0o4000
	ModeSetgid  = 0o2000
	ModeSticky  = 0o1000
	ModePerm    = 0o777
)

// Stat is the metadata fastcopy needs of a file: what lstat(2) reports, with
// times in nanoseconds since the Unix epoch.
type Stat struct {
	Mode   uint32 // type and permission bits (Mode* constants)
	Size   int64
	Blocks int64 // 512-byte blocks allocated
	Dev    uint64
	Ino    uint64
	Nlink  uint64
	Uid    uint32
	Gid    uint32
	Rdev   uint64
	Atime  int64
	Mtime  int64
	Ctime  int64
	// Btime is the creation time where the platform reports it and
	// fastcopy keeps it (Windows); 0 elsewhere.
	Btime int64
}

// Type returns the file type bits of s.
func (s *Stat) Type() uint32 { return s.Mode & ModeType }

// IsDir reports whether s describes a directory.
func (s *Stat) IsDir() bool { return s.Type() == ModeDir }

// IsRegular reports whether s describes a regular file.
func (s *Stat) IsRegular() bool { return s.Type() == ModeRegular }

// IsSymlink reports whether s describes a symbolic link.
func (s *Stat) IsSymlink() bool { return s.Type() == ModeSymlink }

// Sparse reports whether s describes a regular file with fewer blocks
// allocated than its length needs, i.e. one that has holes.
func (s *Stat) Sparse() bool {
	return s.IsRegular() && s.Size > 0 && s.Blocks*512 < s.Size
}

// DirEntry is one name read from a directory, with the type the directory
// reported (0 when the filesystem does not say; Lstat tells then) and,
// where the platform gives it (Linux: d_ino), its inode number, which
// lets a caller stat a directory's names in inode order (0: not known).
type DirEntry struct {
	Name string
	Type uint32
	Ino  uint64
}

// ErrUnsupported is returned (wrapped) by primitives that the platform or the
// filesystem does not offer, such as FICLONE on ext4. Callers fall back to
// the next primitive of the data-path ladder.
var ErrUnsupported = errors.New("operation not supported here")

// FileMode converts the permission and special bits of a Stat mode to an
// fs.FileMode (type bits are left out).
func FileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & ModePerm)
	if mode&ModeSetuid != 0 {
		m |= fs.ModeSetuid
	}
	if mode&ModeSetgid != 0 {
		m |= fs.ModeSetgid
	}
	if mode&ModeSticky != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// Inherited is what a file created in a directory takes from the system
// rather than from its creator: its group (the process's, or the
// directory's when the directory is setgid), and whether the directory
// has a default ACL, which then decides its permission bits instead of the
// umask. Known is false where this cannot be told; then nothing of it may
// be relied on.
type Inherited struct {
	Gid        uint32
	DefaultACL bool
	Known      bool
}
