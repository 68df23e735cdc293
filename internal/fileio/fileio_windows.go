//go:build windows

package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Dir is a directory, named by its path. Windows has no calls relative to
// an open directory, so each name passed to its methods (a single path
// component) is joined to that path, and a symlink or junction is refused
// where the Unix code opens with O_NOFOLLOW. The check and the operation
// are separate calls there, so a directory swapped for a junction between
// the two can redirect the operation: the Unix code has no such window.
type Dir struct {
	path string         // as opened, for messages
	abs  string         // absolute and clean, for the system calls
	lock windows.Handle // the named mutex of Lock, or 0
}

// File is an open file. A File from Dir.AsFile has no handle: its methods
// reach the directory by its path.
type File struct {
	f        *os.File // nil for a directory from Dir.AsFile
	path     string   // for messages
	abs      string   // absolute, to open the file again
	writable bool     // f was opened for writing
}

// ioReparseTagAFUnix marks a Unix domain socket (not in x/sys/windows).
const ioReparseTagAFUnix = 0x80000023

// fileBasicInfo is FILE_BASIC_INFO: times in 100ns units since 1601.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// fileAttributeTagInfo is FILE_ATTRIBUTE_TAG_INFO.
type fileAttributeTagInfo struct {
	FileAttributes uint32
	ReparseTag     uint32
}

// sysPath gives the extended-length form of the absolute path p
// (\\?\C:\... or \\?\UNC\server\share\...), which lifts the MAX_PATH limit
// and leaves names as they are (Win32 would drop trailing dots and spaces
// and turn NUL or CON into devices).
func sysPath(p string) string {
	switch {
	case strings.HasPrefix(p, `\\?\`), strings.HasPrefix(p, `\\.\`):
		return p
	case strings.HasPrefix(p, `\\`):
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + p
}

func createFile(p string, access, disposition, flags uint32) (windows.Handle, error) {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return windows.InvalidHandle, err
	}
	// FILE_SHARE_DELETE lets a file be renamed or removed while it is open,
	// as on Unix; the engine renames temporaries it has just read back.
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	return windows.CreateFile(u, access, share, nil, disposition, flags, 0)
}

// osErr names the display path in an error from the os package, which
// carries the extended-length one.
func osErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *os.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	case errors.As(err, &se):
		err = se.Err
	}
	return pathErr(op, path, err)
}

// OpenDir opens the directory at path, following symlinks in path: it is for
// the roots the user named on the command line.
func OpenDir(path string) (*Dir, error) {
	if err := inject(OpOpenDir, path); err != nil {
		return nil, pathErr("open", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, pathErr("open", path, err)
	}
	st, err := statPath(sysPath(abs), true)
	if err != nil {
		return nil, pathErr("open", path, err)
	}
	if !st.IsDir() {
		return nil, pathErr("open", path, windows.ERROR_DIRECTORY)
	}
	return &Dir{path: path, abs: abs}, nil
}

// Path returns the path the directory was opened as (for messages).
func (d *Dir) Path() string { return d.path }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

func (d *Dir) sys(name string) string { return sysPath(filepath.Join(d.abs, name)) }

// Close closes the directory, releasing its lock.
func (d *Dir) Close() error {
	if d.lock == 0 {
		return nil
	}
	err := windows.CloseHandle(d.lock)
	d.lock = 0
	return err
}

// OpenSub opens the subdirectory name, refusing a symlink or junction
// (ELOOP).
func (d *Dir) OpenSub(name string) (*Dir, error) {
	p := d.join(name)
	if err := inject(OpOpenDir, p); err != nil {
		return nil, pathErr("open", p, err)
	}
	if name == "" || name == "." {
		return &Dir{path: p, abs: d.abs}, nil
	}
	st, err := statPath(d.sys(name), false)
	switch {
	case err != nil:
		return nil, pathErr("open", p, err)
	case st.IsSymlink():
		return nil, pathErr("open", p, syscall.ELOOP)
	case !st.IsDir():
		return nil, pathErr("open", p, windows.ERROR_DIRECTORY)
	}
	return &Dir{path: p, abs: filepath.Join(d.abs, name)}, nil
}

// OpenBeneath opens the directory rel (slash-separated, relative) below d,
// component by component, refusing a symlink or junction on the way. An
// empty rel opens d again.
func (d *Dir) OpenBeneath(rel string) (*Dir, error) {
	cur := &Dir{path: d.path, abs: d.abs}
	for _, part := range strings.Split(rel, "/") {
		switch {
		case part == "" || part == ".":
			continue
		case part == "..":
			return nil, pathErr("open", d.join(rel), syscall.EXDEV)
		case strings.ContainsAny(part, `\:`):
			// Another separator, a drive or an alternate data stream.
			return nil, pathErr("open", d.join(rel), windows.ERROR_INVALID_NAME)
		}
		next, err := cur.OpenSub(part)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	cur.path = d.join(rel)
	return cur, nil
}

// OpenFollow opens the directory rel (slash-separated, relative) below d,
// following symlinks and junctions on the way (-L).
func (d *Dir) OpenFollow(rel string) (*Dir, error) {
	return OpenDir(d.join(filepath.FromSlash(rel)))
}

// ReadDir lists the directory, sorted by name, without "." and "..".
// Reparse points other than symlinks (junctions among them) are listed with
// type 0: Lstat tells what they are.
func (d *Dir) ReadDir() ([]DirEntry, error) {
	if err := inject(OpReadDir, d.path); err != nil {
		return nil, pathErr("readdir", d.path, err)
	}
	des, err := os.ReadDir(d.sys(""))
	if err != nil {
		return nil, osErr("readdir", d.path, err)
	}
	out := make([]DirEntry, 0, len(des))
	for _, de := range des {
		var t uint32
		switch de.Type() {
		case 0:
			t = ModeRegular
		case fs.ModeDir:
			t = ModeDir
		case fs.ModeSymlink:
			t = ModeSymlink
		}
		out = append(out, DirEntry{Name: de.Name(), Type: t})
	}
	return out, nil // os.ReadDir sorts by name
}

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
// creation time), Uid and Gid are 0. Blocks is the size rounded up to 512
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
func (d *Dir) Lstat(name string) (Stat, error) { return d.stat(name, false) }

// StatFollow returns the metadata of name, following a symlink.
func (d *Dir) StatFollow(name string) (Stat, error) { return d.stat(name, true) }

func (d *Dir) stat(name string, follow bool) (Stat, error) {
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

// Open opens name for reading. With follow false a symlink or junction is
// refused (ELOOP) rather than followed.
func (d *Dir) Open(name string, follow bool) (*File, error) {
	p := d.join(name)
	if err := inject(OpOpen, p); err != nil {
		return nil, pathErr("open", p, err)
	}
	h, err := openRead(d.sys(name), follow)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &File{f: os.NewFile(uintptr(h), p), path: p, abs: filepath.Join(d.abs, name)}, nil
}

// openRead opens p for reading. Without follow, p is opened as the reparse
// point itself, if it is one: a symlink or junction is then refused, and a
// reparse point of another kind (a deduplicated or cloud file, whose data
// its filter supplies) is opened again through its filter and checked to be
// the same file.
func openRead(p string, follow bool) (windows.Handle, error) {
	flags := uint32(windows.FILE_FLAG_BACKUP_SEMANTICS)
	if follow {
		return createFile(p, windows.GENERIC_READ, windows.OPEN_EXISTING, flags)
	}
	h, err := createFile(p, windows.GENERIC_READ, windows.OPEN_EXISTING, flags|windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if err != nil {
		return h, err
	}
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		windows.CloseHandle(h)
		return windows.InvalidHandle, err
	}
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT == 0 {
		return h, nil
	}
	defer windows.CloseHandle(h)
	var ti fileAttributeTagInfo
	if err := windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&ti)), uint32(unsafe.Sizeof(ti))); err != nil {
		return windows.InvalidHandle, err
	}
	if winMode(ti.FileAttributes, ti.ReparseTag)&ModeType == ModeSymlink {
		return windows.InvalidHandle, syscall.ELOOP
	}
	h2, err := createFile(p, windows.GENERIC_READ, windows.OPEN_EXISTING, flags)
	if err != nil {
		return h2, err
	}
	if same, err := sameFile(h, h2); err != nil || !same {
		windows.CloseHandle(h2)
		if err == nil {
			err = errReplaced
		}
		return windows.InvalidHandle, err
	}
	return h2, nil
}

// CreateTemp creates name exclusively (CREATE_NEW, which fails on any
// existing name, a symlink included), open for reading and writing. Windows
// has no mode to give it: the file gets its directory's inherited ACL.
func (d *Dir) CreateTemp(name string) (*File, error) {
	return d.CreateTempMode(name, 0o600)
}

// CreateTempMode is CreateTemp; Windows has no permission bits to create a
// file with (Chmod sets the read-only attribute).
func (d *Dir) CreateTempMode(name string, perm uint32) (*File, error) {
	p := d.join(name)
	if err := inject(OpCreate, p); err != nil {
		return nil, pathErr("create", p, err)
	}
	h, err := createFile(d.sys(name), windows.GENERIC_READ|windows.GENERIC_WRITE, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL)
	if err != nil {
		return nil, pathErr("create", p, err)
	}
	return &File{f: os.NewFile(uintptr(h), p), path: p, abs: filepath.Join(d.abs, name), writable: true}, nil
}

// OpenTemp opens a temporary left by an earlier run for writing; Windows
// builds do not: it returns an error, and the caller writes afresh.
func (d *Dir) OpenTemp(name string) (*File, error) {
	return nil, pathErr("open", d.join(name), errors.ErrUnsupported)
}

// Mkdir creates the directory name (perm is not used: Windows has no modes;
// the directory inherits its parent's ACL).
func (d *Dir) Mkdir(name string, perm uint32) error {
	p := d.join(name)
	if err := inject(OpMkdir, p); err != nil {
		return pathErr("mkdir", p, err)
	}
	return osErr("mkdir", p, os.Mkdir(d.sys(name), FileMode(perm)))
}

// Rename renames oldName in d to newName in nd, replacing what newName was
// (MoveFileEx with MOVEFILE_REPLACE_EXISTING: a symlink is replaced, never
// followed). A read-only target, which Windows will not replace, loses its
// read-only attribute first, as POSIX asks only for a writable directory.
func (d *Dir) Rename(oldName string, nd *Dir, newName string) error {
	p := nd.join(newName)
	if err := inject(OpRename, p); err != nil {
		return pathErr("rename", p, err)
	}
	from, to := d.sys(oldName), nd.sys(newName)
	err := os.Rename(from, to)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		err = retryWritable(to, func() error { return os.Rename(from, to) }, err)
	}
	return osErr("rename", p, err)
}

// retryWritable runs op again, which failed with err, after clearing the
// read-only attribute of p (which makes Windows refuse to replace or delete
// it), and puts the attribute back if op fails again. A reparse point at p,
// or a p without the attribute, is left alone and err returned.
func retryWritable(p string, op func() error, err error) error {
	u, uerr := windows.UTF16PtrFromString(p)
	if uerr != nil {
		return err
	}
	attrs, aerr := windows.GetFileAttributes(u)
	if aerr != nil || attrs&windows.FILE_ATTRIBUTE_READONLY == 0 || attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		return err
	}
	if windows.SetFileAttributes(u, attrs&^windows.FILE_ATTRIBUTE_READONLY) != nil {
		return err
	}
	if err := op(); err != nil {
		_ = windows.SetFileAttributes(u, attrs)
		return err
	}
	return nil
}

// Remove removes the non-directory name. A symlink or junction to a
// directory is removed as the link it is; its target is not touched.
func (d *Dir) Remove(name string) error {
	p, sp := d.join(name), d.sys(name)
	if err := inject(OpRemove, p); err != nil {
		return pathErr("remove", p, err)
	}
	u, err := windows.UTF16PtrFromString(sp)
	if err != nil {
		return pathErr("remove", p, err)
	}
	err = windows.DeleteFile(u)
	if err == windows.ERROR_ACCESS_DENIED {
		attrs, aerr := windows.GetFileAttributes(u)
		const dirLink = windows.FILE_ATTRIBUTE_DIRECTORY | windows.FILE_ATTRIBUTE_REPARSE_POINT
		if aerr == nil && attrs&dirLink == dirLink {
			err = windows.RemoveDirectory(u)
		} else if aerr == nil && attrs&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
			err = retryWritable(sp, func() error { return windows.DeleteFile(u) }, err)
		}
	}
	return pathErr("remove", p, err)
}

// RemoveDir removes the empty directory name; a symlink or junction there
// is refused.
func (d *Dir) RemoveDir(name string) error {
	p, sp := d.join(name), d.sys(name)
	u, err := windows.UTF16PtrFromString(sp)
	if err != nil {
		return pathErr("remove", p, err)
	}
	attrs, err := windows.GetFileAttributes(u)
	if err == nil && (attrs&windows.FILE_ATTRIBUTE_DIRECTORY == 0 || attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0) {
		err = windows.ERROR_DIRECTORY
	}
	if err == nil {
		err = windows.RemoveDirectory(u)
		if err == windows.ERROR_ACCESS_DENIED {
			err = retryWritable(sp, func() error { return windows.RemoveDirectory(u) }, err)
		}
	}
	return pathErr("remove", p, err)
}

// Symlink creates name as a symlink to target. os.Symlink makes a
// directory symlink when target, taken relative to the link, is a
// directory at that moment, and a file symlink otherwise (so a link made
// before its target is copied is a file symlink). Creating symlinks needs
// Developer Mode or the SeCreateSymbolicLink privilege; without them the
// error is one IsPermission accepts.
func (d *Dir) Symlink(target, name string) error {
	p := d.join(name)
	if err := inject(OpCreate, p); err != nil {
		return pathErr("symlink", p, err)
	}
	// The plain absolute path, not the extended-length one: os.Symlink
	// resolves target against it, and "\\?\" paths take ".." literally.
	return osErr("symlink", p, os.Symlink(target, filepath.Join(d.abs, name)))
}

// Readlink returns the target of the symlink or junction name.
func (d *Dir) Readlink(name string) (string, error) {
	p := d.join(name)
	if err := inject(OpRead, p); err != nil {
		return "", pathErr("readlink", p, err)
	}
	t, err := os.Readlink(d.sys(name))
	return t, osErr("readlink", p, err)
}

// Link creates newName in d as a hard link to oldName in od.
func (d *Dir) Link(od *Dir, oldName, newName string) error {
	p := d.join(newName)
	if err := inject(OpLink, p); err != nil {
		return pathErr("link", p, err)
	}
	return osErr("link", p, os.Link(od.sys(oldName), d.sys(newName)))
}

// Mknod cannot create FIFOs, sockets or device nodes on Windows; it returns
// an error that says so.
func (d *Dir) Mknod(name string, mode uint32, rdev uint64) error {
	p := d.join(name)
	if err := inject(OpCreate, p); err != nil {
		return pathErr("mknod", p, err)
	}
	return pathErr("mknod", p, fmt.Errorf("creating a %s is not supported on windows: %w", describe(mode), ErrUnsupported))
}

// chown accepts only "leave unchanged" (-1, -1): Windows files have owner
// SIDs, not numeric ids, and fastcopy does not copy them.
func chown(uid, gid int) error {
	if uid == -1 && gid == -1 {
		return nil
	}
	return fmt.Errorf("setting a numeric owner on windows: %w", ErrUnsupported)
}

// Lchown would set the owner of name; see chown.
func (d *Dir) Lchown(name string, uid, gid int) error {
	return pathErr("chown", d.join(name), chown(uid, gid))
}

// Chmod sets the read-only attribute of name from the owner's write bit of
// mode, as os.Chmod does; that is all of a mode Windows keeps.
func (d *Dir) Chmod(name string, mode uint32) error {
	return osErr("chmod", d.join(name), os.Chmod(d.sys(name), FileMode(mode)))
}

// Lutimes sets the access and modification times of name, in nanoseconds
// (kept to 100ns), without following a symlink or junction.
func (d *Dir) Lutimes(name string, atime, mtime int64) error {
	h, err := createFile(d.sys(name), windows.FILE_WRITE_ATTRIBUTES, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if err == nil {
		err = setTimes(h, atime, mtime)
		windows.CloseHandle(h)
	}
	return pathErr("utimes", d.join(name), err)
}

func setTimes(h windows.Handle, atime, mtime int64) error {
	a, m := windows.NsecToFiletime(atime), windows.NsecToFiletime(mtime)
	return windows.SetFileTime(h, nil, &a, &m)
}

// AsFile returns a File for the metadata calls shared with files (Chmod,
// SetTimes, Stat). It has no handle of its own: its methods open the
// directory by path. Closing it does nothing.
func (d *Dir) AsFile() *File { return &File{path: d.path, abs: d.abs} }

// Lock takes an exclusive lock on the directory until Close or the end of
// the process. It returns ErrLocked at once when another process holds it.
//
// Windows cannot lock a directory, so the lock is a named mutex in the
// Global namespace (seen from every session), named after the directory's
// volume serial number and file index, so that any local path reaching the
// directory names the same lock. Only its existence counts; no thread owns
// it. It does not reach other machines writing to the same share.
func (d *Dir) Lock() error {
	if d.lock != 0 {
		return nil
	}
	st, err := d.Stat()
	if err != nil {
		return err
	}
	name, err := windows.UTF16PtrFromString(fmt.Sprintf(`Global\fastcopy-%08x-%016x`, st.Dev, st.Ino))
	if err != nil {
		return pathErr("lock", d.path, err)
	}
	h, err := windows.CreateMutex(nil, false, name)
	switch err {
	case nil:
		d.lock = h
		return nil
	case windows.ERROR_ALREADY_EXISTS:
		windows.CloseHandle(h)
		return ErrLocked
	case windows.ERROR_ACCESS_DENIED:
		return ErrLocked // it exists, made by another user
	}
	return pathErr("lock", d.path, err)
}

// LockShared returns an error wrapping ErrUnsupported: a named mutex has
// no shared form.
func (d *Dir) LockShared() error {
	return pathErr("lock", d.path, ErrUnsupported)
}

// Parent opens the directory above d (at the root, the root again).
func (d *Dir) Parent() (*Dir, error) {
	return OpenDir(filepath.Dir(d.abs))
}

// Syncfs flushes the whole volume holding d (FlushFileBuffers on the
// volume), which Windows allows only to administrators. Otherwise, and on a
// network share, it returns an error that IsFallback accepts: File.Sync on
// each file is then the way to make data durable.
func (d *Dir) Syncfs() error {
	if err := inject(OpSync, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	if err := inject(OpSyncfs, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	return pathErr("syncfs", d.path, flushVolume(d.abs))
}

func flushVolume(p string) error {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return err
	}
	var mount, vol [windows.MAX_PATH + 1]uint16
	if err := windows.GetVolumePathName(u, &mount[0], uint32(len(mount))); err != nil {
		return fmt.Errorf("cannot find the volume to flush (%v): %w", err, ErrUnsupported)
	}
	if err := windows.GetVolumeNameForVolumeMountPoint(&mount[0], &vol[0], uint32(len(vol))); err != nil {
		return fmt.Errorf("no local volume to flush (%v): %w", err, ErrUnsupported)
	}
	// \\?\Volume{GUID}\ names the root directory; without the final
	// backslash it names the volume.
	h, err := createFile(strings.TrimSuffix(windows.UTF16ToString(vol[:]), `\`), windows.GENERIC_WRITE, windows.OPEN_EXISTING, 0)
	if err == nil {
		err = windows.FlushFileBuffers(h)
		windows.CloseHandle(h)
	}
	switch err {
	case windows.ERROR_ACCESS_DENIED:
		return fmt.Errorf("flushing a whole volume needs administrator rights: %w", ErrUnsupported)
	case windows.ERROR_INVALID_FUNCTION, windows.ERROR_NOT_SUPPORTED:
		return fmt.Errorf("this volume cannot be flushed as a whole (%v): %w", err, ErrUnsupported)
	}
	return err
}

// Path returns the path the file was opened as (for messages).
func (f *File) Path() string { return f.path }

func (f *File) handle() windows.Handle { return windows.Handle(f.f.Fd()) }

// Close closes the file.
func (f *File) Close() error {
	if f.f == nil {
		return nil
	}
	return f.f.Close()
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

// Read reads up to len(p) bytes; it returns 0, nil at end of file.
func (f *File) Read(p []byte) (int, error) {
	if err := inject(OpRead, f.path); err != nil {
		return 0, pathErr("read", f.path, err)
	}
	if f.f == nil {
		return 0, pathErr("read", f.path, syscall.EISDIR)
	}
	n, err := f.f.Read(p)
	if err == io.EOF {
		return 0, nil
	}
	if err != nil {
		return 0, osErr("read", f.path, err)
	}
	return n, nil
}

// ReadAt reads up to len(p) bytes at off; it returns 0, nil at end of file.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := inject(OpRead, f.path); err != nil {
		return 0, pathErr("read", f.path, err)
	}
	if f.f == nil {
		return 0, pathErr("read", f.path, syscall.EISDIR)
	}
	n, err := f.f.ReadAt(p, off)
	if err == io.EOF {
		return n, nil
	}
	if err != nil {
		return 0, osErr("read", f.path, err)
	}
	return n, nil
}

// WriteAt writes all of p at off.
func (f *File) WriteAt(p []byte, off int64) error {
	if f.f == nil {
		return pathErr("write", f.path, syscall.EISDIR)
	}
	p, ferr := injectWrite(f.path, p)
	if len(p) > 0 {
		if _, err := f.f.WriteAt(p, off); err != nil {
			return osErr("write", f.path, err)
		}
	}
	return pathErr("write", f.path, ferr)
}

// Truncate sets the file's length.
func (f *File) Truncate(size int64) error {
	if f.f == nil {
		return pathErr("truncate", f.path, syscall.EISDIR)
	}
	return osErr("truncate", f.path, f.f.Truncate(size))
}

// reopen opens f's file again by its path, with access, and checks that
// the path still names it (a File from Dir.AsFile is reached by path
// alone). Windows checks access when a handle is opened, so this is how a
// file opened for reading gets its attributes set or its data flushed.
func (f *File) reopen(access uint32) (windows.Handle, error) {
	h, err := createFile(sysPath(f.abs), access, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS)
	if err != nil || f.f == nil {
		return h, err
	}
	if same, err := sameFile(h, f.handle()); err != nil || !same {
		windows.CloseHandle(h)
		if err == nil {
			err = errReplaced
		}
		return windows.InvalidHandle, err
	}
	return h, nil
}

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

// Sync flushes the file's data to stable storage (FlushFileBuffers).
// Windows wants write access for that, so a file opened for reading is
// opened again for writing, its read-only attribute (which refuses write
// access even to the owner) lifted for the time of that open.
func (f *File) Sync() error {
	if err := inject(OpSync, f.path); err != nil {
		return pathErr("sync", f.path, err)
	}
	if f.writable {
		return osErr("sync", f.path, f.f.Sync())
	}
	h, err := f.reopen(windows.GENERIC_WRITE)
	if err == windows.ERROR_ACCESS_DENIED {
		err = f.withAttrHandle(func(ah windows.Handle) error {
			attrs, err := getAttrs(ah)
			if err != nil || attrs&windows.FILE_ATTRIBUTE_READONLY == 0 {
				return windows.ERROR_ACCESS_DENIED
			}
			if err := setAttrs(ah, attrs&^windows.FILE_ATTRIBUTE_READONLY); err != nil {
				return err
			}
			h, err = f.reopen(windows.GENERIC_WRITE)
			if rerr := setAttrs(ah, attrs); err == nil && rerr != nil {
				windows.CloseHandle(h)
				err = rerr
			}
			return err
		})
	}
	if err != nil {
		return pathErr("sync", f.path, err)
	}
	defer windows.CloseHandle(h)
	return pathErr("sync", f.path, windows.FlushFileBuffers(h))
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

// Clone returns an error that IsFallback accepts: block cloning on ReFS
// (FSCTL_DUPLICATE_EXTENTS_TO_FILE) is not used.
func (f *File) Clone(src *File) error {
	if err := inject(OpClone, f.path); err != nil {
		return pathErr("clone", f.path, err)
	}
	return pathErr("clone", f.path, ErrUnsupported)
}

// CopyRange returns an error that IsFallback accepts: Windows has no
// in-kernel copy of a byte range between open files.
func (f *File) CopyRange(src *File, srcOff, dstOff, n int64) (int64, error) {
	if err := inject(OpCopyRange, f.path); err != nil {
		return 0, pathErr("copy_file_range", f.path, err)
	}
	return 0, pathErr("copy_file_range", f.path, ErrUnsupported)
}

// NextData returns an error that IsFallback accepts: holes are not looked
// for on Windows (and Stat never reports a file as sparse there).
func (f *File) NextData(off, size int64) (data, hole int64, err error) {
	return 0, 0, pathErr("seek", f.path, ErrUnsupported)
}

// DropCache returns an error that IsFallback accepts: Windows has no call
// to drop one file's cached pages.
func (f *File) DropCache() error {
	return pathErr("fadvise", f.path, ErrUnsupported)
}

// AdviseSequential does nothing on Windows (the hint exists only as a flag
// to CreateFile).
func (f *File) AdviseSequential() {}

// Prefetch does nothing on Windows: it has no call that starts reading a
// range of an open file into the cache and returns.
func (f *File) Prefetch(off, n int64) {}

// CanPrefetch is false: Prefetch does nothing here, so files are not
// opened ahead of their use.
const CanPrefetch = false

// CopyXattrs returns an error that IsFallback accepts: NTFS extended
// attributes and alternate data streams are not copied.
func CopyXattrs(src, dst *File, all bool) error {
	return pathErr("listxattr", src.path, ErrUnsupported)
}

// CopyXattrsAt returns an error that IsFallback accepts; see CopyXattrs.
func CopyXattrsAt(src *Dir, srcName string, dst *Dir, dstName string, follow, all bool) error {
	return pathErr("listxattr", src.join(srcName), ErrUnsupported)
}

// Xattrs reports no extended attributes on Windows, where none are copied.
func Xattrs(f *File) (map[string][]byte, error) { return nil, nil }

// IsNoAttr reports whether err says an extended attribute does not exist;
// no call here looks one up, so it is always false.
func IsNoAttr(err error) bool { return false }

// DeviceOf reports the device as unknown: Windows tells no rotational or
// USB disk from an SSD here, and the caller picks its default.
func DeviceOf(path string) Device { return Device{unknown: true} }

// Inherit reports that what a new file gets cannot be told here: the
// caller sets every attribute itself.
func (d *Dir) Inherit() Inherited { return Inherited{} }

// Umask reports that there is no umask here.
func Umask() (uint32, bool) { return 0, false }

// Geteuid returns -1, as os.Geteuid does on Windows: there are no numeric
// user ids, and the engine must not take the process for root (uid 0),
// which would make it set owners.
func Geteuid() int { return -1 }

// Getegid returns -1, as os.Getegid does on Windows.
func Getegid() int { return -1 }

// Groups returns nil: Windows has no numeric groups.
func Groups() []uint32 { return nil }

// OpenLimit returns 0: Windows sets no small per-process limit on handles.
func OpenLimit() int { return 0 }

// IsNotExist reports whether err says a file does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// IsExist reports whether err says a file already exists.
func IsExist(err error) bool {
	return errors.Is(err, windows.ERROR_FILE_EXISTS) || errors.Is(err, windows.ERROR_ALREADY_EXISTS) ||
		errors.Is(err, syscall.EEXIST)
}

// IsNoSpace reports whether err says the device is full or over quota.
func IsNoSpace(err error) bool {
	switch Errno(err) {
	case windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL, windows.ERROR_DISK_QUOTA_EXCEEDED,
		syscall.ENOSPC, syscall.EDQUOT:
		return true
	}
	return false
}

// IsPermission reports whether err is a permission refusal (including a
// missing privilege, such as the one to create symlinks).
func IsPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD)
}

// IsFallback reports whether err means "this primitive does not work here;
// use the next one": ErrUnsupported, the Windows errors for an unsupported
// or cross-volume request, and the errno values the fault injector uses.
func IsFallback(err error) bool {
	if errors.Is(err, ErrUnsupported) {
		return true
	}
	switch Errno(err) {
	case windows.ERROR_NOT_SUPPORTED, windows.ERROR_INVALID_FUNCTION, windows.ERROR_NOT_SAME_DEVICE,
		windows.ERROR_INVALID_PARAMETER,
		syscall.ENOTSUP, syscall.EOPNOTSUPP, syscall.EXDEV, syscall.EINVAL, syscall.ENOSYS, syscall.ENOTTY, syscall.EBADF:
		return true
	}
	return false
}

// OpenDirect would open name for unbuffered reads; it returns an error that
// IsFallback accepts, and callers read back through DropCache instead.
func (d *Dir) OpenDirect(name string) (*File, error) {
	return nil, osErr("open", d.join(name), ErrUnsupported)
}

// StartWriteback does nothing on Windows.
func (f *File) StartWriteback(off, n int64) {}

// DropRange does nothing on Windows.
func (f *File) DropRange(off, n int64) {}

// CanStageDirs is false: Windows refuses to rename a directory while
// handles of it or of files in it are open, so new directories are made
// under their own names at once.
const CanStageDirs = false

// RenameDirNoReplace is not used on Windows (CanStageDirs is false).
func (d *Dir) RenameDirNoReplace(oldName, newName string) error {
	return ErrUnsupported
}
