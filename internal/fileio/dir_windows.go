//go:build windows

package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

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

// Unfaulted is d: no fault set reaches a Dir here (see the Unix one).
func (d *Dir) Unfaulted() *Dir { return d }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

func (d *Dir) sys(name string) string { return sysPath(filepath.Join(d.abs, name)) }

// Close closes the directory, releasing its lock.
func (d *Dir) Close() error {
	if d.closed {
		return os.ErrClosed
	}
	d.closed = true
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

// OpenNoAtime is Open without following: Windows updates access times
// lazily, if at all, and a handle cannot ask it not to.
func (d *Dir) OpenNoAtime(name string) (*File, error) { return d.Open(name, false) }

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

// Parent opens the directory above d (at the root, the root again).
func (d *Dir) Parent() (*Dir, error) {
	return OpenDir(filepath.Dir(d.abs))
}

// OpenDirect would open name for unbuffered reads; it returns an error that
// IsFallback accepts, and callers read back through DropCache instead.
func OpenDirect(d *Dir, name string) (*File, error) {
	return nil, osErr("open", d.join(name), ErrUnsupported)
}

// CanStageDirs is false: Windows refuses to rename a directory while
// handles of it or of files in it are open, so new directories are made
// under their own names at once.
const CanStageDirs = false

// RenameDirNoReplace is not used on Windows (CanStageDirs is false).
func RenameDirNoReplace(d *Dir, oldName, newName string) error {
	return ErrUnsupported
}
