//go:build windows

package fileio

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// statPath returns the metadata of the file at the extended-length path p,
// of a symlink or junction itself unless follow.
func statPath(p string, follow bool) (Stat, error) {
	flags := uint32(windows.FILE_FLAG_BACKUP_SEMANTICS) // needed to open a directory
	if !follow {
		flags |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	h, err := createFile(p, windows.FILE_READ_ATTRIBUTES, windows.OPEN_EXISTING, flags)
	if err != nil {
		return Stat{}, err
	}
	defer windows.CloseHandle(h)
	return statHandle(h)
}

// statHandle fills a Stat for the open file h: the type and permission bits
// are made up from its attributes as the os package does (read-only gives
// 0444, else 0666; directories add 0111), Dev and Ino are the volume serial
// number and the 64-bit file index, Ctime is the change time (not the
// creation time, which is Btime), Uid and Gid are 0. Blocks is the size rounded up to 512
// bytes, so no file looks sparse: NextData cannot find holes here.
func statHandle(h windows.Handle) (Stat, error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return Stat{}, err
	}
	var tag uint32
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		var ti fileAttributeTagInfo
		if err := windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&ti)), uint32(unsafe.Sizeof(ti))); err != nil {
			return Stat{}, err
		}
		tag = ti.ReparseTag
	}
	ctime := fi.LastWriteTime.Nanoseconds()
	var bi fileBasicInfo
	if err := windows.GetFileInformationByHandleEx(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&bi)), uint32(unsafe.Sizeof(bi))); err == nil && bi.ChangeTime != 0 {
		ctime = (bi.ChangeTime - 116444736000000000) * 100
	}
	mode := winMode(fi.FileAttributes, tag)
	size := int64(fi.FileSizeHigh)<<32 | int64(fi.FileSizeLow)
	var blocks int64
	if mode&ModeType == ModeRegular {
		blocks = (size + 511) / 512
	}
	return Stat{
		Mode:   mode,
		Size:   size,
		Blocks: blocks,
		Dev:    uint64(fi.VolumeSerialNumber),
		Ino:    uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow),
		Nlink:  uint64(fi.NumberOfLinks),
		Atime:  fi.LastAccessTime.Nanoseconds(),
		Mtime:  fi.LastWriteTime.Nanoseconds(),
		Ctime:  ctime,
		Btime:  fi.CreationTime.Nanoseconds(),
	}, nil
}

// winMode makes up Stat.Mode from file attributes and a reparse tag.
// Symlinks and junctions are both symlinks to fastcopy: neither is walked
// into, and a copied junction becomes a directory symlink. Other reparse
// points (deduplicated, cloud or compressed files) read as what they hold.
func winMode(attrs, tag uint32) uint32 {
	perm := uint32(0o666)
	if attrs&windows.FILE_ATTRIBUTE_READONLY != 0 {
		perm = 0o444
	}
	if attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		switch tag {
		case windows.IO_REPARSE_TAG_SYMLINK, windows.IO_REPARSE_TAG_MOUNT_POINT:
			return ModeSymlink | 0o777
		case ioReparseTagAFUnix:
			return ModeSocket | perm
		}
	}
	if attrs&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		return ModeDir | perm | 0o111
	}
	return ModeRegular | perm
}

func fileID(h windows.Handle) (vol uint32, idx uint64, err error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return 0, 0, err
	}
	return fi.VolumeSerialNumber, uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow), nil
}

func sameFile(a, b windows.Handle) (bool, error) {
	va, ia, err := fileID(a)
	if err != nil {
		return false, err
	}
	vb, ib, err := fileID(b)
	if err != nil {
		return false, err
	}
	return va == vb && ia == ib, nil
}

// errReplaced says that a name no longer refers to the file it was opened as.
var errReplaced = errors.New("the name now refers to another file")

// Lstat returns the metadata of name without following a symlink or junction.
func (d *Dir) Lstat(name string) (Stat, error) { return statAt(d, name, false) }

// StatFollow returns the metadata of name, following a symlink.
func (d *Dir) StatFollow(name string) (Stat, error) { return statAt(d, name, true) }

// statAt is the stat of name in d, of a symlink or junction itself unless
// follow (Lstat, StatFollow).
func statAt(d *Dir, name string, follow bool) (Stat, error) {
	p := d.join(name)
	if err := inject(OpStat, p); err != nil {
		return Stat{}, pathErr("stat", p, err)
	}
	st, err := statPath(d.sys(name), follow)
	if err != nil {
		return Stat{}, pathErr("stat", p, err)
	}
	return st, nil
}

// Stat returns the metadata of the directory itself.
func (d *Dir) Stat() (Stat, error) {
	st, err := statPath(sysPath(d.abs), true)
	if err != nil {
		return Stat{}, pathErr("stat", d.path, err)
	}
	return st, nil
}

// Stat returns the metadata of the open file.
func (f *File) Stat() (Stat, error) {
	var st Stat
	var err error
	if f.f == nil {
		st, err = statPath(sysPath(f.abs), true)
	} else {
		st, err = statHandle(f.handle())
	}
	if err != nil {
		return Stat{}, pathErr("stat", f.path, err)
	}
	return st, nil
}
