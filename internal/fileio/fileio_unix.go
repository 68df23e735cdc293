//go:build unix

package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dir is an open directory. Every name passed to its methods is a single path
// component, resolved relative to the directory, never through a symlink.
type Dir struct {
	faults faults // the run's fault set (tag fcfault), passed on to what is opened from d
	fd     int
	path   string

	inheritOnce sync.Once
	inherit     Inherited
}

// File is an open file.
type File struct {
	faults faults // the fault set of the Dir it was opened from (tag fcfault)
	fd     int
	path   string
}

func ignoringEINTR(fn func() error) error {
	for {
		err := fn()
		if err != unix.EINTR {
			return err
		}
	}
}

// OpenDir opens the directory at path, following symlinks in path: it is for
// the roots the user named on the command line.
func OpenDir(path string) (*Dir, error) { return OpenDirFaults(path, nil) }

// OpenDirFaults is OpenDir for a run under test: the directory, and every
// Dir, File and Node opened from it, inject the faults of s (nil: none) in
// a build with the tag fcfault, and nothing in any other build.
func OpenDirFaults(path string, s *FaultSet) (*Dir, error) {
	h := faultsOf(s)
	if err := h.inject(OpOpenDir, path); err != nil {
		return nil, pathErr("open", path, err)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, pathErr("open", path, err)
	}
	return &Dir{faults: h, fd: fd, path: path}, nil
}

// Path returns the path the directory was opened as (for messages).
func (d *Dir) Path() string { return d.path }

// Unfaulted is d without the run's fault set (tag fcfault): for a file of
// the program's own bookkeeping, whose calls the faults a test injects by
// count or path are not meant to meet. It shares d's descriptor: use it
// only while d is open, and never close it.
func (d *Dir) Unfaulted() *Dir { return &Dir{fd: d.fd, path: d.path} }

// faultSet is d's fault set, for the code shared with platforms whose Dir
// carries none.
func (d *Dir) faultSet() faults { return d.faults }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// Close closes the directory.
func (d *Dir) Close() error { return closeOnce(&d.fd) }

// OpenSub opens the subdirectory name without following a symlink.
func (d *Dir) OpenSub(name string) (*Dir, error) {
	p := d.join(name)
	if err := d.faults.inject(OpOpenDir, p); err != nil {
		return nil, pathErr("open", p, err)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &Dir{faults: d.faults, fd: fd, path: p}, nil
}

// OpenBeneath opens the directory rel (slash-separated, relative) below d
// without following any symlink on the way. An empty rel opens d again.
func (d *Dir) OpenBeneath(rel string) (*Dir, error) {
	if rel == "" || rel == "." {
		rel = "."
	}
	// A path longer than the kernel takes in one call is walked below.
	if len(rel) >= 4096 {
		goto walk
	}
	if fd, err := openBeneath(d.fd, rel); err == nil {
		return &Dir{faults: d.faults, fd: fd, path: d.join(rel)}, nil
	} else if !errors.Is(err, ErrUnsupported) {
		return nil, pathErr("open", d.join(rel), err)
	}
walk:
	// Component by component, each with O_NOFOLLOW.
	cur, err := d.OpenSub(".")
	if err != nil {
		return nil, err
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			cur.Close()
			return nil, pathErr("open", d.join(rel), unix.EXDEV)
		}
		next, err := cur.OpenSub(part)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	cur.path = d.join(rel)
	return cur, nil
}

// OpenFollow opens the directory rel (slash-separated, relative) below d,
// following symlinks on the way (-L). A path longer than the kernel takes
// in one call is opened component by component, each through the
// descriptor of the one before, so depth is never limited by PATH_MAX.
func (d *Dir) OpenFollow(rel string) (*Dir, error) {
	if rel == "" {
		rel = "."
	}
	p := d.join(rel)
	if len(rel) < 4096 {
		return d.openFollow(rel, p)
	}
	cur, err := d.openFollow(".", d.path)
	if err != nil {
		return nil, err
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." {
			continue
		}
		next, err := cur.openFollow(part, p)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	cur.path = p
	return cur, nil
}

// openFollow opens name below d, following symlinks; p names it in errors.
func (d *Dir) openFollow(name, p string) (*Dir, error) {
	if err := d.faults.inject(OpOpenDir, p); err != nil {
		return nil, pathErr("open", p, err)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &Dir{faults: d.faults, fd: fd, path: p}, nil
}

// ReadDir lists the directory, sorted by name, without "." and "..",
// with each name's inode number where the platform reports it (Linux).
func (d *Dir) ReadDir() ([]DirEntry, error) {
	if err := d.faults.inject(OpReadDir, d.path); err != nil {
		return nil, pathErr("readdir", d.path, err)
	}
	// A fresh descriptor: the offset of d.fd must not move, and the names
	// are read only once per directory.
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", d.path, err)
	}
	out, err := listDir(fd, d.path)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func statFromUnix(st *unix.Stat_t) Stat {
	return Stat{
		Mode:   uint32(st.Mode),
		Size:   st.Size,
		Blocks: int64(st.Blocks),
		Dev:    uint64(st.Dev),
		Ino:    uint64(st.Ino),
		Nlink:  uint64(st.Nlink),
		Uid:    st.Uid,
		Gid:    st.Gid,
		Rdev:   uint64(st.Rdev),
		Atime:  unix.TimespecToNsec(st.Atim),
		Mtime:  unix.TimespecToNsec(st.Mtim),
		Ctime:  unix.TimespecToNsec(st.Ctim),
	}
}

// Lstat returns the metadata of name without following a symlink.
func (d *Dir) Lstat(name string) (Stat, error) {
	return fstatat(d, name, unix.AT_SYMLINK_NOFOLLOW)
}

// StatFollow returns the metadata of name, following a symlink.
func (d *Dir) StatFollow(name string) (Stat, error) {
	return fstatat(d, name, 0)
}

// fstatat is the fstatat(2) of name in d (Lstat, StatFollow).
func fstatat(d *Dir, name string, flags int) (Stat, error) {
	var st unix.Stat_t
	p := d.join(name)
	if err := d.faults.inject(OpStat, p); err != nil {
		return Stat{}, pathErr("stat", p, err)
	}
	err := ignoringEINTR(func() error { return unix.Fstatat(d.fd, name, &st, flags) })
	if err != nil {
		return Stat{}, pathErr("stat", p, err)
	}
	return statFromUnix(&st), nil
}

// Stat returns the metadata of the directory itself.
func (d *Dir) Stat() (Stat, error) { return fstat(d.fd, d.path) }

func fstat(fd int, path string) (Stat, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return Stat{}, pathErr("stat", path, err)
	}
	return statFromUnix(&st), nil
}

// Open opens name for reading. With follow false a symlink is refused
// (ELOOP) rather than followed.
func (d *Dir) Open(name string, follow bool) (*File, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	return openAt(d, name, flags)
}

// OpenNoAtime is Open without following a symlink, asking the kernel
// not to update the file's access time as it is read (O_NOATIME, Linux):
// a read of a file whose times were just set, or which was just written,
// otherwise dirties its inode once more, and moves an access time this
// program set or wants to keep. Only the file's owner, or a process that
// may change any file's times, may ask: for anyone else, and where the
// platform has no such flag, it is Open.
func (d *Dir) OpenNoAtime(name string) (*File, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOFOLLOW
	if oNoatime != 0 {
		f, err := openAt(d, name, flags|oNoatime)
		if err == nil || !errors.Is(err, unix.EPERM) {
			return f, err
		}
	}
	return openAt(d, name, flags)
}

// openAt opens name in d with flags, for the opens that read.
func openAt(d *Dir, name string, flags int) (*File, error) {
	p := d.join(name)
	if err := d.faults.inject(OpOpen, p); err != nil {
		return nil, pathErr("open", p, err)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, flags, 0)
		return err
	})
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &File{faults: d.faults, fd: fd, path: p}, nil
}

// Mkdir creates the directory name with mode perm.
func (d *Dir) Mkdir(name string, perm uint32) error {
	p := d.join(name)
	if err := d.faults.inject(OpMkdir, p); err != nil {
		return pathErr("mkdir", p, err)
	}
	return pathErr("mkdir", p, ignoringEINTR(func() error { return unix.Mkdirat(d.fd, name, perm) }))
}

// Rename renames oldName in d to newName in nd, replacing what newName was
// (a symlink or a hard link is replaced, never written through).
func (d *Dir) Rename(oldName string, nd *Dir, newName string) error {
	p := nd.join(newName)
	if err := d.faults.inject(OpRename, p); err != nil {
		return pathErr("rename", p, err)
	}
	return pathErr("rename", p, ignoringEINTR(func() error { return unix.Renameat(d.fd, oldName, nd.fd, newName) }))
}

// Remove removes the non-directory name.
func (d *Dir) Remove(name string) error {
	if err := d.faults.inject(OpRemove, d.join(name)); err != nil {
		return pathErr("remove", d.join(name), err)
	}
	return pathErr("remove", d.join(name), ignoringEINTR(func() error { return unix.Unlinkat(d.fd, name, 0) }))
}

// RemoveDir removes the empty directory name.
func (d *Dir) RemoveDir(name string) error {
	return pathErr("remove", d.join(name), ignoringEINTR(func() error { return unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR) }))
}

// Symlink creates name as a symlink to target.
func (d *Dir) Symlink(target, name string) error {
	p := d.join(name)
	if err := d.faults.inject(OpCreate, p); err != nil {
		return pathErr("symlink", p, err)
	}
	return pathErr("symlink", p, ignoringEINTR(func() error { return unix.Symlinkat(target, d.fd, name) }))
}

// Readlink returns the target of the symlink name.
func (d *Dir) Readlink(name string) (string, error) {
	p := d.join(name)
	if err := d.faults.inject(OpRead, p); err != nil {
		return "", pathErr("readlink", p, err)
	}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = unix.Readlinkat(d.fd, name, buf)
			return err
		})
		if err != nil {
			return "", pathErr("readlink", p, err)
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// Link creates newName in d as a hard link to oldName in od, without
// following a symlink at oldName.
func (d *Dir) Link(od *Dir, oldName, newName string) error {
	p := d.join(newName)
	if err := d.faults.inject(OpLink, p); err != nil {
		return pathErr("link", p, err)
	}
	return pathErr("link", p, ignoringEINTR(func() error { return unix.Linkat(od.fd, oldName, d.fd, newName, 0) }))
}

// Mknod creates a FIFO, socket or device node name with the type and
// permission bits of mode.
func (d *Dir) Mknod(name string, mode uint32, rdev uint64) error {
	p := d.join(name)
	if err := d.faults.inject(OpCreate, p); err != nil {
		return pathErr("mknod", p, err)
	}
	return pathErr("mknod", p, ignoringEINTR(func() error { return mknodat(d.fd, name, mode, rdev) }))
}

// Lchown sets the owner of name in d without following a symlink.
func Lchown(d *Dir, name string, uid, gid int) error {
	return pathErr("chown", d.join(name), ignoringEINTR(func() error {
		return unix.Fchownat(d.fd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	}))
}

// Lutimes sets the access and modification times of name in d, in nanoseconds,
// without following a symlink.
func Lutimes(d *Dir, name string, atime, mtime int64) error {
	ts := []unix.Timespec{unix.NsecToTimespec(atime), unix.NsecToTimespec(mtime)}
	return pathErr("utimes", d.join(name), ignoringEINTR(func() error {
		return unix.UtimesNanoAt(d.fd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
	}))
}

// AsFile returns a File on the same descriptor, for the metadata calls
// shared with files (Chmod, Chown, SetTimes, xattrs). Closing it closes d.
func (d *Dir) AsFile() *File { return &File{faults: d.faults, fd: d.fd, path: d.path} }

// Parent opens the directory above d (".."; at the root, the root again).
func (d *Dir) Parent() (*Dir, error) {
	return d.openFollow("..", d.join(".."))
}

// Path returns the path the file was opened as (for messages).
func (f *File) Path() string { return f.path }

// Close closes the file.
func (f *File) Close() error { return closeOnce(&f.fd) }

// closeOnce closes the descriptor *fd and marks it closed: a second Close
// returns os.ErrClosed instead of closing whatever descriptor the number
// has been given to since (another file of this run, or of a goroutine
// that has nothing to do with it), as os.File does.
func closeOnce(fd *int) error {
	n := *fd
	if n < 0 {
		return os.ErrClosed
	}
	*fd = -1
	return unix.Close(n)
}

// Stat returns the metadata of the open file.
func (f *File) Stat() (Stat, error) { return fstat(f.fd, f.path) }

// Read reads up to len(p) bytes; it returns 0, nil at end of file.
func (f *File) Read(p []byte) (int, error) {
	if err := f.faults.inject(OpRead, f.path); err != nil {
		return 0, pathErr("read", f.path, err)
	}
	for {
		n, err := unix.Read(f.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, pathErr("read", f.path, err)
		}
		return n, nil
	}
}

// ReadAt reads up to len(p) bytes at off; it returns 0, nil at end of file.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := f.faults.inject(OpRead, f.path); err != nil {
		return 0, pathErr("read", f.path, err)
	}
	for {
		n, err := unix.Pread(f.fd, p, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, pathErr("read", f.path, err)
		}
		return n, nil
	}
}

// WriteAt writes all of p at off.
func (f *File) WriteAt(p []byte, off int64) error {
	p, ferr := f.faults.injectWrite(f.path, p)
	for len(p) > 0 {
		n, err := unix.Pwrite(f.fd, p, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return pathErr("write", f.path, err)
		}
		if n == 0 {
			return pathErr("write", f.path, syscall.EIO)
		}
		p = p[n:]
		off += int64(n)
	}
	return pathErr("write", f.path, ferr)
}

// Truncate sets the file's length.
func (f *File) Truncate(size int64) error {
	return pathErr("truncate", f.path, ignoringEINTR(func() error { return unix.Ftruncate(f.fd, size) }))
}

// Sync flushes the file's data to stable storage (fdatasync where there is one).
func (f *File) Sync() error {
	if err := f.faults.inject(OpSync, f.path); err != nil {
		return pathErr("sync", f.path, err)
	}
	return pathErr("sync", f.path, ignoringEINTR(func() error { return fdatasync(f.fd) }))
}

// Chmod sets the file's mode, including setuid, setgid and sticky bits.
func (f *File) Chmod(mode uint32) error {
	if err := f.faults.inject(OpChmod, f.path); err != nil {
		return pathErr("chmod", f.path, err)
	}
	return pathErr("chmod", f.path, ignoringEINTR(func() error { return unix.Fchmod(f.fd, mode&0o7777) }))
}

// Chown sets the file's owner and group (-1 leaves one unchanged).
func (f *File) Chown(uid, gid int) error {
	if err := f.faults.inject(OpChown, f.path); err != nil {
		return pathErr("chown", f.path, err)
	}
	return pathErr("chown", f.path, ignoringEINTR(func() error { return unix.Fchown(f.fd, uid, gid) }))
}

// SetTimes sets the access and modification times, in nanoseconds.
func (f *File) SetTimes(atime, mtime int64) error {
	ts := []unix.Timespec{unix.NsecToTimespec(atime), unix.NsecToTimespec(mtime)}
	return pathErr("utimes", f.path, ignoringEINTR(func() error { return futimens(f.fd, ts) }))
}

// SetTimesAs sets the times of f, open as name in d: through the
// descriptor where futimens keeps nanoseconds, so that they go to the file
// opened whatever its name now is; otherwise (darwin) by name, without
// following a symlink.
func (f *File) SetTimesAs(d *Dir, name string, atime, mtime int64) error {
	if futimensExact {
		return f.SetTimes(atime, mtime)
	}
	return Lutimes(d, name, atime, mtime)
}

// Geteuid returns the effective user id of the process.
func Geteuid() int { return unix.Geteuid() }

// OwnedBy reports whether st is owned by the user uid (Geteuid's).
func OwnedBy(st *Stat, uid int) bool { return int(st.Uid) == uid }

// Getegid returns the effective group id of the process.
func Getegid() int { return unix.Getegid() }

// Groups returns the process's effective group and its supplementary
// groups (the groups it may give a file it owns).
func Groups() []uint32 {
	out := []uint32{uint32(unix.Getegid())}
	groups, _ := unix.Getgroups()
	for _, g := range groups {
		out = append(out, uint32(g))
	}
	return out
}

// OpenLimit returns how many descriptors the process may have open
// (RLIMIT_NOFILE, soft), or 0 when it cannot tell.
func OpenLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}

// IsNotExist reports whether err says a file does not exist.
func IsNotExist(err error) bool { return errors.Is(err, unix.ENOENT) }

// IsExist reports whether err says a file already exists.
func IsExist(err error) bool { return errors.Is(err, unix.EEXIST) }

// IsNoSpace reports whether err says the device is full or over quota.
func IsNoSpace(err error) bool { return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) }

// IsPermission reports whether err is a permission refusal.
func IsPermission(err error) bool { return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) }

// IsFallback reports whether err means "this primitive does not work here;
// use the next one": ENOTSUP, EOPNOTSUPP, EXDEV, EINVAL, ENOSYS, ENOTTY.
func IsFallback(err error) bool {
	if errors.Is(err, ErrUnsupported) {
		return true
	}
	switch Errno(err) {
	case unix.ENOTSUP, unix.EXDEV, unix.EINVAL, unix.ENOSYS, unix.ENOTTY, unix.EBADF:
		return true
	}
	return Errno(err) == unix.EOPNOTSUPP
}

// renameIfFree renames oldName onto newName in d unless newName exists.
func renameIfFree(d *Dir, oldName, newName string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, newName, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		return unix.EEXIST
	} else if err != unix.ENOENT {
		return err
	}
	return ignoringEINTR(func() error { return unix.Renameat(d.fd, oldName, d.fd, newName) })
}
