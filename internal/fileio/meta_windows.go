//go:build windows

package fileio

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// chown accepts only "leave unchanged" (-1, -1): Windows files have owner
// SIDs, not numeric ids, and fastcopy does not copy them.
func chown(uid, gid int) error {
	if uid == -1 && gid == -1 {
		return nil
	}
	return fmt.Errorf("setting a numeric owner on windows: %w", ErrUnsupported)
}

// Lchown would set the owner of name in d; see chown.
func Lchown(d *Dir, name string, uid, gid int) error {
	return pathErr("chown", d.join(name), chown(uid, gid))
}

// Chmod sets the read-only attribute of name in d from the owner's write bit of
// mode, as os.Chmod does; that is all of a mode Windows keeps.
func Chmod(d *Dir, name string, mode uint32) error {
	return osErr("chmod", d.join(name), os.Chmod(d.sys(name), FileMode(mode)))
}

// Lutimes sets the access and modification times of name in d, in nanoseconds
// (kept to 100ns), without following a symlink or junction.
func Lutimes(d *Dir, name string, atime, mtime int64) error {
	h, err := createFile(d.sys(name), windows.FILE_WRITE_ATTRIBUTES, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if err == nil {
		err = setTimes(h, atime, mtime)
		windows.CloseHandle(h)
	}
	return pathErr("utimes", d.join(name), err)
}

// SetBtime sets the creation time of name in d, in nanoseconds (kept to 100ns),
// without following a symlink or junction: what robocopy keeps of a file
// besides its data, attributes and last write time.
func SetBtime(d *Dir, name string, btime int64) error {
	h, err := createFile(d.sys(name), windows.FILE_WRITE_ATTRIBUTES, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if err == nil {
		c := windows.NsecToFiletime(btime)
		err = windows.SetFileTime(h, &c, nil, nil)
		windows.CloseHandle(h)
	}
	return pathErr("setbtime", d.join(name), err)
}

func setTimes(h windows.Handle, atime, mtime int64) error {
	a, m := windows.NsecToFiletime(atime), windows.NsecToFiletime(mtime)
	return windows.SetFileTime(h, nil, &a, &m)
}

// AsFile returns a File for the metadata calls shared with files (Chmod,
// SetTimes, Stat). It has no handle of its own: its methods open the
// directory by path. Closing it does nothing.
func (d *Dir) AsFile() *File { return &File{path: d.path, abs: d.abs} }

// withAttrHandle runs fn on a handle that may set f's attributes and times:
// f's own when f was opened for writing, else a new one (Windows grants
// FILE_WRITE_ATTRIBUTES on a read-only file too).
func (f *File) withAttrHandle(fn func(windows.Handle) error) error {
	if f.writable {
		return fn(f.handle())
	}
	h, err := f.reopen(windows.FILE_READ_ATTRIBUTES | windows.FILE_WRITE_ATTRIBUTES)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return fn(h)
}

func getAttrs(h windows.Handle) (uint32, error) {
	var fi windows.ByHandleFileInformation
	err := windows.GetFileInformationByHandle(h, &fi)
	return fi.FileAttributes, err
}

// setAttrs sets the attributes of h, leaving its times alone (zero times
// in FILE_BASIC_INFO mean "unchanged", and so would zero attributes).
func setAttrs(h windows.Handle, attrs uint32) error {
	if attrs == 0 {
		attrs = windows.FILE_ATTRIBUTE_NORMAL
	}
	bi := fileBasicInfo{FileAttributes: attrs}
	return windows.SetFileInformationByHandle(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&bi)), uint32(unsafe.Sizeof(bi)))
}

// Chmod sets the file's read-only attribute from the owner's write bit of
// mode, as os.File.Chmod does; that is all of a mode Windows keeps.
func (f *File) Chmod(mode uint32) error {
	if err := inject(OpChmod, f.path); err != nil {
		return pathErr("chmod", f.path, err)
	}
	return pathErr("chmod", f.path, f.withAttrHandle(func(h windows.Handle) error {
		attrs, err := getAttrs(h)
		if err != nil {
			return err
		}
		want := attrs &^ windows.FILE_ATTRIBUTE_READONLY
		if mode&0o200 == 0 {
			want |= windows.FILE_ATTRIBUTE_READONLY
		}
		if want == attrs {
			return nil
		}
		return setAttrs(h, want)
	}))
}

// Chown would set the file's owner and group; see chown.
func (f *File) Chown(uid, gid int) error {
	if err := inject(OpChown, f.path); err != nil {
		return pathErr("chown", f.path, err)
	}
	return pathErr("chown", f.path, chown(uid, gid))
}

// SetTimes sets the access and modification times, in nanoseconds (kept to
// 100ns).
func (f *File) SetTimes(atime, mtime int64) error {
	return pathErr("utimes", f.path, f.withAttrHandle(func(h windows.Handle) error {
		return setTimes(h, atime, mtime)
	}))
}

// SetTimesAs sets the times of f, open as name in d; see SetTimes.
func (f *File) SetTimesAs(d *Dir, name string, atime, mtime int64) error {
	return f.SetTimes(atime, mtime)
}

// CopyXattrs copies nothing and says nothing: a Windows file has no
// extended attributes of the kind the Unix one copies (user.*, POSIX
// ACLs), so none is lost, and the run must not say "not kept: extended
// attributes" of every file. NTFS's own extended attributes, alternate
// data streams and ACLs are not copied either; the README says so.
func CopyXattrs(src, dst *File, all bool) error { return nil }

// CopyXattrsAt copies nothing; see CopyXattrs.
func CopyXattrsAt(src *Dir, srcName string, dst *Dir, dstName string, follow, all bool) error {
	return nil
}

// ModeBits is the part of a mode a file here keeps: the owner's write bit,
// which is the read-only attribute. Stat shows 0666 or 0444 for every file
// whatever was set, so the rest is neither kept nor lost.
const ModeBits = 0o200

// Xattrs reports no extended attributes on Windows, where none are copied.
func Xattrs(f *File) (map[string][]byte, error) { return nil, nil }

// IsNoAttr reports whether err says an extended attribute does not exist;
// no call here looks one up, so it is always false.
func IsNoAttr(err error) bool { return false }

// Inherit reports that what a new file gets cannot be told here: the
// caller sets every attribute itself.
func (d *Dir) Inherit() Inherited { return Inherited{} }

// Umask reports that there is no umask here.
func Umask() (uint32, bool) { return 0, false }

// Geteuid returns -1, as os.Geteuid does on Windows: there are no numeric
// user ids, and the engine must not take the process for root (uid 0),
// which would make it set owners.
func Geteuid() int { return -1 }

// OwnedBy reports true: Windows has no numeric owner to compare (Stat's
// Uid is 0, Geteuid -1), so a file's owner proves nothing either way and
// the callers' other checks (type, links, file ID, content) decide.
func OwnedBy(*Stat, int) bool { return true }

// Getegid returns -1, as os.Getegid does on Windows.
func Getegid() int { return -1 }

// Groups returns nil: Windows has no numeric groups.
func Groups() []uint32 { return nil }
