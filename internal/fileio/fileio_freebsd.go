//go:build freebsd

package fileio

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdatasync calls fdatasync(2) (FreeBSD 11.1 and later), which x/sys
// numbers but does not wrap.
func fdatasync(fd int) error {
	if _, _, e := unix.Syscall(unix.SYS_FDATASYNC, uintptr(fd), 0, 0); e != 0 {
		return e
	}
	return nil
}

// futimens calls futimens(2) (FreeBSD 10.3 and later), which x/sys numbers
// but does not wrap, so the times keep their nanoseconds.
func futimens(fd int, ts []unix.Timespec) error {
	if _, _, e := unix.Syscall(unix.SYS_FUTIMENS, uintptr(fd), uintptr(unsafe.Pointer(&ts[0])), 0); e != 0 {
		return e
	}
	return nil
}

// mknodat creates a FIFO or a device node. FreeBSD's mknodat(2) makes a
// FIFO when given S_IFIFO and a zero rdev; it cannot make a socket.
func mknodat(dirfd int, name string, mode uint32, rdev uint64) error {
	switch mode & ModeType {
	case ModeFIFO:
		rdev = 0
	case ModeSocket:
		return fmt.Errorf("creating a socket is not supported on freebsd: %w", ErrUnsupported)
	}
	return unix.Mknodat(dirfd, name, mode, rdev)
}

// openBeneath is not offered: O_RESOLVE_BENEATH still follows a symlink
// that stays below the directory, so the caller walks rel component by
// component with O_NOFOLLOW instead.
func openBeneath(dirfd int, rel string) (int, error) { return -1, ErrUnsupported }

// Clone returns an error that IsFallback accepts: FreeBSD has no reflink
// call (ZFS block cloning is reached only through copy_file_range(2)).
func (f *File) Clone(src *File) error {
	if err := f.faults.inject(OpClone, f.path); err != nil {
		return pathErr("clone", f.path, err)
	}
	return pathErr("clone", f.path, ErrUnsupported)
}

// Syncfs returns an error that IsFallback accepts: FreeBSD has no syncfs(2),
// and sync(2) returns before the data is written, so it would be no
// guarantee. The engine then flushes each file (File.Sync) and each
// directory it wrote.
func Syncfs(d *Dir) error {
	if err := d.faults.inject(OpSync, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	if err := d.faults.inject(OpSyncfs, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	// sync(2) only starts the writes and returns: start them (so the
	// per-file flushes that follow find less to do), then say that no
	// filesystem-wide flush that waits exists here, and the engine flushes
	// each file and directory itself.
	_ = unix.Sync()
	return pathErr("syncfs", d.path, ErrUnsupported)
}

// xattrNamespaces are FreeBSD's extattr namespaces, with the prefix their
// attributes carry in fastcopy (the Linux spelling, which x/sys also uses).
var xattrNamespaces = []struct {
	ns     int
	prefix string
}{
	{unix.EXTATTR_NAMESPACE_USER, "user."},
	{unix.EXTATTR_NAMESPACE_SYSTEM, "system."},
}

// CopyXattrs copies the extended attributes of src to dst. Without all,
// only the user namespace is copied (the system one needs privileges). It
// returns an error only for an attribute that could be read but not set.
func CopyXattrs(src, dst *File, all bool) error {
	for i, ns := range xattrNamespaces {
		if i > 0 && !all {
			break
		}
		names, err := listExtattr(src.fd, ns.ns)
		if err != nil {
			continue // a filesystem without them, or a namespace we may not read
		}
		for _, name := range names {
			full := ns.prefix + name
			val, err := getExtattr(src.fd, full)
			if err != nil {
				continue
			}
			if err := unix.Fsetxattr(dst.fd, full, val, 0); err != nil {
				return pathErr("setxattr "+full, dst.path, err)
			}
		}
	}
	return nil
}

// Xattrs lists the extended attributes of f with their values, named
// "user.NAME" and "system.NAME" (the system namespace only when the
// process may read it), for comparisons in tests and the verifier.
func Xattrs(f *File) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, ns := range xattrNamespaces {
		names, err := listExtattr(f.fd, ns.ns)
		switch {
		case err == unix.EOPNOTSUPP || (err == unix.EPERM && ns.ns != unix.EXTATTR_NAMESPACE_USER):
			continue
		case err != nil:
			return nil, pathErr("listxattr", f.path, err)
		}
		for _, name := range names {
			full := ns.prefix + name
			v, err := getExtattr(f.fd, full)
			if err != nil {
				return nil, pathErr("getxattr", f.path, err)
			}
			out[full] = v
		}
	}
	return out, nil
}

// listExtattr returns the names in one namespace. extattr_list_fd(2)
// returns each name after a length byte, without a namespace prefix, and
// cuts the list short (rather than failing) when the buffer is too small.
func listExtattr(fd, ns int) ([]string, error) {
	size, err := unix.FlistxattrNS(fd, ns, nil)
	for err == nil && size > 0 {
		buf := make([]byte, size+256)
		var n int
		n, err = unix.FlistxattrNS(fd, ns, buf)
		if err != nil {
			break
		}
		if n == len(buf) {
			size = 4 * len(buf) // it grew; the list may be cut
			continue
		}
		var names []string
		for b := buf[:n]; len(b) > 0; {
			l := int(b[0])
			if 1+l > len(b) {
				break
			}
			names = append(names, string(b[1:1+l]))
			b = b[1+l:]
		}
		return names, nil
	}
	return nil, err
}

// getExtattr reads one attribute in full; extattr_get_fd(2) also cuts a
// value short rather than failing.
func getExtattr(fd int, name string) ([]byte, error) {
	size, err := unix.Fgetxattr(fd, name, nil)
	for err == nil {
		v := make([]byte, size+1)
		var n int
		n, err = unix.Fgetxattr(fd, name, v)
		if err != nil {
			break
		}
		if n < len(v) {
			return v[:n], nil
		}
		size = 4 * len(v)
	}
	return nil, err
}

// CanStageDirs says the engine may make a new directory under a hidden name
// and rename it onto its own while descriptors of it and of files in it
// are open and in use: nothing here finds a file by its path.
const CanStageDirs = true

// RenameDirNoReplace renames oldName in d onto newName in d, failing with
// EEXIST if newName exists. FreeBSD's renameat has no flags: the check and
// the rename are two calls.
func RenameDirNoReplace(d *Dir, oldName, newName string) error {
	p := d.join(newName)
	if err := d.faults.inject(OpRename, p); err != nil {
		return pathErr("rename", p, err)
	}
	return pathErr("rename", p, renameIfFree(d, oldName, newName))
}

// futimensExact says File.SetTimes keeps nanoseconds here (futimens(2)).
const futimensExact = true
