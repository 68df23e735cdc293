//go:build linux

package fileio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func fdatasync(fd int) error { return unix.Fdatasync(fd) }

func futimens(fd int, ts []unix.Timespec) error {
	return unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH)
}

func mknodat(dirfd int, name string, mode uint32, rdev uint64) error {
	return unix.Mknodat(dirfd, name, mode, int(rdev))
}

var openat2Missing bool // set once when the kernel lacks openat2

func openBeneath(dirfd int, rel string) (int, error) {
	if openat2Missing {
		return -1, ErrUnsupported
	}
	how := &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(dirfd, rel, how)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR, unix.EAGAIN:
			continue
		case unix.ENOSYS:
			openat2Missing = true
			return -1, ErrUnsupported
		}
		return -1, err
	}
}

// Clone makes f share src's data blocks (FICLONE). It returns an error that
// IsFallback accepts when the filesystem cannot clone or the two files are on
// different filesystems.
func (f *File) Clone(src *File) error {
	if err := f.faults.inject(OpClone, f.path); err != nil {
		return pathErr("clone", f.path, err)
	}
	return pathErr("clone", f.path, ignoringEINTR(func() error { return unix.IoctlFileClone(f.fd, src.fd) }))
}

// CopyRange copies n bytes from src at srcOff to f at dstOff inside the
// kernel (copy_file_range). It returns the bytes copied; 0 with a nil error
// means src ended early.
func (f *File) CopyRange(src *File, srcOff, dstOff, n int64) (int64, error) {
	if err := f.faults.inject(OpCopyRange, f.path); err != nil {
		return 0, pathErr("copy_file_range", f.path, err)
	}
	var done int64
	for done < n {
		chunk := n - done
		if chunk > 1<<30 {
			chunk = 1 << 30
		}
		m, err := unix.CopyFileRange(src.fd, &srcOff, f.fd, &dstOff, int(chunk), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, pathErr("copy_file_range", f.path, err)
		}
		if m == 0 {
			break
		}
		done += int64(m)
	}
	return done, nil
}

// Syncfs flushes the whole filesystem holding d to stable storage. On FUSE
// it returns an error that IsFallback accepts without flushing: the kernel
// passes syncfs on only to drivers that take FUSE_SYNCFS (exfat-fuse,
// ntfs-3g and fusefat do not) and reports success for the others, whose
// metadata stays in the driver's memory; an fsync of each file and
// directory reaches them (FUSE_FSYNC, FUSE_FSYNCDIR). A filesystem fstatfs
// cannot tell is taken for one that may be FUSE.
func Syncfs(d *Dir) error {
	if err := d.faults.inject(OpSync, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	if err := d.faults.inject(OpSyncfs, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	// A filesystem that cannot be told (fstatfs fails: on FUSE, a
	// directory removed while open) may be FUSE, where syncfs flushes
	// nothing and succeeds: no filesystem-wide flush is claimed then.
	var sfs unix.Statfs_t
	if err := ignoringEINTR(func() error { return unix.Fstatfs(d.fd, &sfs) }); err != nil || sfs.Type == fuseSuperMagic {
		return pathErr("syncfs", d.path, ErrUnsupported)
	}
	return pathErr("syncfs", d.path, ignoringEINTR(func() error { return unix.Syncfs(d.fd) }))
}

// fuseSuperMagic is statfs's f_type on every FUSE filesystem (fuse and
// fuseblk alike).
const fuseSuperMagic = 0x65735546

// oNoatime is the open flag that leaves a file's access time alone.
const oNoatime = unix.O_NOATIME

// IsFUSE reports whether d is on a FUSE filesystem: one served by a process
// (exfat-fuse, ntfs-3g, fusefat, sshfs), which can die, and whose driver
// may not do what a kernel filesystem does.
func IsFUSE(d *Dir) bool {
	var sfs unix.Statfs_t
	return ignoringEINTR(func() error { return unix.Fstatfs(d.fd, &sfs) }) == nil && sfs.Type == fuseSuperMagic
}

// CopyXattrs copies the extended attributes of src to dst. Without all,
// only the user namespace and the POSIX ACLs are copied (the others need
// privileges). It returns an error only for an attribute that could be
// read but not set. One refused for its size (ErrXattrTooLarge) does not
// stop the others: the first such is returned once all were tried.
func CopyXattrs(src, dst *File, all bool) error {
	buf := make([]byte, 1024)
	var n int
	var err error
	for {
		n, err = unix.Flistxattr(src.fd, buf)
		if err == unix.ERANGE {
			buf = make([]byte, len(buf)*4)
			continue
		}
		break
	}
	if err != nil || n == 0 {
		return nil // no attributes, or a filesystem without them
	}
	var skipped xattrSkipped
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if name == "" || (!all && !unprivileged(name)) {
			continue
		}
		val, err := getxattr(src.fd, name)
		if err != nil {
			continue
		}
		if err := unix.Fsetxattr(dst.fd, name, val, 0); err != nil {
			err = pathErr("setxattr "+name, dst.path, xattrSetErr(dst.fd, name, val, err))
			if skipped.note(err) {
				continue
			}
			return err
		}
	}
	return skipped.err
}

// Xattrs lists the extended attributes of f with their values, sorted by
// name (for comparisons in tests and the verifier).
func Xattrs(f *File) (map[string][]byte, error) {
	buf := make([]byte, 4096)
	n, err := unix.Flistxattr(f.fd, buf)
	if err != nil {
		if err == unix.ENOTSUP {
			return nil, nil
		}
		return nil, pathErr("listxattr", f.path, err)
	}
	out := map[string][]byte{}
	for _, name := range bytes.Split(bytes.TrimRight(buf[:n], "\x00"), []byte{0}) {
		if len(name) == 0 {
			continue
		}
		v, err := getxattr(f.fd, string(name))
		if err != nil {
			return nil, pathErr("getxattr", f.path, err)
		}
		out[string(name)] = v
	}
	return out, nil
}

// DeviceOf finds the block device that holds path, from sysfs.
func DeviceOf(path string) Device {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Device{}
	}
	major, minor := unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))
	if major == 0 {
		return Device{} // tmpfs, overlay, FUSE: no block device
	}
	link := fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		return Device{}
	}
	dev := Device{
		Name:    filepath.Base(real),
		USB:     strings.Contains(real, "/usb"),
		Virtual: strings.Contains(real, "/virtio") || strings.Contains(real, "/vbd-"),
	}
	// A partition has no queue of its own; its parent directory does.
	for _, dir := range []string{real, filepath.Dir(real)} {
		if b, err := os.ReadFile(filepath.Join(dir, "queue", "rotational")); err == nil {
			dev.Rotational = strings.TrimSpace(string(b)) == "1"
			if dir != real {
				dev.Name = filepath.Base(dir)
			}
			break
		}
	}
	// A loop device reads through a file on another device: describe that.
	if strings.HasPrefix(dev.Name, "loop") {
		if b, err := os.ReadFile(filepath.Join("/sys/block", dev.Name, "loop", "backing_file")); err == nil {
			if back := DeviceOf(strings.TrimSpace(string(b))); back.Name != "" {
				back.Name = dev.Name + " on " + back.Name
				return back
			}
		}
	}
	return dev
}

// IsNoAttr reports whether err says an extended attribute does not exist.
func IsNoAttr(err error) bool { return errors.Is(err, unix.ENODATA) }

// OpenDirect opens name in d (never through a symlink) for reads that bypass the
// page cache (O_DIRECT): each read comes from the device, after the kernel
// has written back any dirty pages of the range it covers. Reads need a
// buffer from AlignedBuffer and offsets that are multiples of its alignment.
// A filesystem without direct I/O (tmpfs, some FUSE filesystems) refuses
// the open with an error that IsFallback accepts.
func OpenDirect(d *Dir, name string) (*File, error) {
	return openAt(d, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_DIRECT)
}

// StartWriteback starts writing the dirty pages of n bytes at off to the
// device and returns without waiting (sync_file_range with
// SYNC_FILE_RANGE_WRITE). It promises no durability: it only lets the
// device work while the caller writes on, so that a later flush or direct
// read of the range has little left to wait for.
func (f *File) StartWriteback(off, n int64) {
	_ = unix.SyncFileRange(f.fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// CanStageDirs says the engine may make a new directory under a hidden name
// and rename it onto its own while descriptors of it and of files in it
// are open and in use: nothing here finds a file by its path.
const CanStageDirs = true

// RenameDirNoReplace renames oldName in d onto newName in d, failing with
// EEXIST if newName exists, even as an empty directory (which a plain
// rename would silently replace). A filesystem without RENAME_NOREPLACE
// gets a check and a plain rename, whose window is its own.
func RenameDirNoReplace(d *Dir, oldName, newName string) error {
	p := d.join(newName)
	if err := d.faults.inject(OpRename, p); err != nil {
		return pathErr("rename", p, err)
	}
	err := ignoringEINTR(func() error { return unix.Renameat2(d.fd, oldName, d.fd, newName, unix.RENAME_NOREPLACE) })
	if err == unix.EINVAL || err == unix.ENOSYS {
		err = renameIfFree(d, oldName, newName)
	}
	return pathErr("rename", p, err)
}

// futimensExact says File.SetTimes keeps nanoseconds here (utimensat(fd, "", AT_EMPTY_PATH)).
const futimensExact = true

// ReserveDescriptors grows this process's descriptor table at once to hold
// at least n descriptors, where the limit allows. Linux grows the table by
// doubling as descriptors are opened, and each growth of a table shared by
// several threads waits for an RCU grace period while every other thread
// that opens a file waits for it: a run that holds thousands of
// descriptors open pays one growth instead of seven (20,000 files of 4 KiB
// with --verify=cache: 7 % of the wall time on a 2-core VM). The table
// never shrinks; the descriptor used to grow it is closed.
func ReserveDescriptors(n int) {
	if n <= 64 {
		return
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	if high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, n-1); err == nil {
		unix.Close(high)
	}
	unix.Close(fd)
}

// DescriptorTableSize is how many descriptors this process's table holds
// now (FDSize in /proc/self/status): what ReserveDescriptors grows.
func DescriptorTableSize() (int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "FDSize:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("/proc/self/status has no FDSize")
}
