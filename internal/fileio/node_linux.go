//go:build linux

package fileio

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// Node is an entry of a directory held for metadata changes: a descriptor
// opened with O_PATH|O_NOFOLLOW, which opens neither a device nor a FIFO
// and never follows a symlink. Its Chmod, Chown, SetTimes and xattr calls
// act on the object that was opened and stat'ed, whatever its name is made
// to point to afterwards (a symlink swapped in by another writer of the
// directory cannot redirect them).
type Node struct {
	faults faults // the fault set of the Dir it was opened from (tag fcfault)
	fd     int
	path   string
	st     Stat
}

// OpenNode opens name without following a symlink, for metadata changes
// through the object itself. A symlink is refused (ELOOP): its metadata is
// set by name with the l* calls, which act on the symlink.
func (d *Dir) OpenNode(name string) (*Node, error) {
	return openNode(d, name, false)
}

// OpenSymlinkNode opens the symlink name itself (O_PATH|O_NOFOLLOW, which
// Linux allows on a symlink), for setting its owner, times and extended
// attributes through the descriptor: they land on the symlink that was
// opened, whatever its name is made to hold afterwards. Anything but a
// symlink is refused (EINVAL). Chmod does not apply to a symlink node.
func (d *Dir) OpenSymlinkNode(name string) (*Node, error) {
	return openNode(d, name, true)
}

// openNode opens name with O_PATH|O_NOFOLLOW and keeps it when it is a
// symlink exactly when symlink says so: otherwise ELOOP (a symlink where
// none was wanted) or EINVAL (anything else where a symlink was).
func openNode(d *Dir, name string, symlink bool) (*Node, error) {
	p := d.join(name)
	if err := d.faults.inject(OpOpen, p); err != nil {
		return nil, pathErr("open", p, err)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	st, err := fstat(fd, p)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.IsSymlink() != symlink {
		unix.Close(fd)
		errno := unix.ELOOP
		if symlink {
			errno = unix.EINVAL
		}
		return nil, pathErr("open", p, errno)
	}
	return &Node{faults: d.faults, fd: fd, path: p, st: st}, nil
}

// Stat returns the metadata of the node as it was when opened.
func (n *Node) Stat() Stat { return n.st }

// Restat returns the node's current metadata.
func (n *Node) Restat() (Stat, error) { return fstat(n.fd, n.path) }

// Path returns the path the node was opened as (for messages).
func (n *Node) Path() string { return n.path }

// Close closes the node.
func (n *Node) Close() error { return closeOnce(&n.fd) }

// proc names the node's object through its descriptor, for the calls that
// take no descriptor: following this magic link reaches the opened object
// itself, not whatever its name now points to. For a symlink node it
// reaches the symlink, which is not followed further (setxattr on it sets
// the symlink's attributes).
func (n *Node) proc() string { return "/proc/self/fd/" + strconv.Itoa(n.fd) }

// procErr turns ENOENT from a /proc path (no /proc mounted) into
// ErrUnsupported.
func procErr(err error) error {
	if err == unix.ENOENT {
		return ErrUnsupported
	}
	return err
}

// Chmod sets the node's mode, including setuid, setgid and sticky bits:
// fchmodat2(fd, "", AT_EMPTY_PATH) (Linux 6.6), or else chmod of its
// /proc/self/fd name.
func (n *Node) Chmod(mode uint32) error {
	if err := n.faults.inject(OpChmod, n.path); err != nil {
		return pathErr("chmod", n.path, err)
	}
	mode &= 0o7777
	err := ignoringEINTR(func() error { return unix.Fchmodat(n.fd, "", mode, unix.AT_EMPTY_PATH) })
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL {
		err = n.chmodProc(mode)
	}
	return pathErr("chmod", n.path, err)
}

// chmodProc is Chmod for kernels without fchmodat2.
func (n *Node) chmodProc(mode uint32) error {
	return procErr(ignoringEINTR(func() error { return unix.Fchmodat(unix.AT_FDCWD, n.proc(), mode, 0) }))
}

// Chown sets the node's owner and group (-1 leaves one unchanged):
// fchownat(fd, "", AT_EMPTY_PATH|AT_SYMLINK_NOFOLLOW), the descriptor's own
// object, a symlink node's symlink.
func (n *Node) Chown(uid, gid int) error {
	if err := n.faults.inject(OpChown, n.path); err != nil {
		return pathErr("chown", n.path, err)
	}
	return pathErr("chown", n.path, ignoringEINTR(func() error {
		return unix.Fchownat(n.fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
	}))
}

// SetTimes sets the node's access and modification times, in nanoseconds:
// utimensat(fd, "", AT_EMPTY_PATH), or else of its /proc/self/fd name.
func (n *Node) SetTimes(atime, mtime int64) error {
	if err := n.faults.inject(OpUtimes, n.path); err != nil {
		return pathErr("utimes", n.path, err)
	}
	ts := []unix.Timespec{unix.NsecToTimespec(atime), unix.NsecToTimespec(mtime)}
	err := ignoringEINTR(func() error { return unix.UtimesNanoAt(n.fd, "", ts, unix.AT_EMPTY_PATH) })
	if err == unix.EINVAL || err == unix.ENOENT {
		err = procErr(ignoringEINTR(func() error { return unix.UtimesNanoAt(unix.AT_FDCWD, n.proc(), ts, 0) }))
	}
	return pathErr("utimes", n.path, err)
}

// Chmod sets the mode of name in d, which must not be a symlink (Linux has no
// symlink modes), through a Node: a symlink swapped in for name is
// refused, never followed.
func Chmod(d *Dir, name string, mode uint32) error {
	n, err := d.OpenNode(name)
	if err != nil {
		return err
	}
	defer n.Close()
	return n.Chmod(mode)
}

// WatchWrites starts watching the node for writes by any process of this
// machine (inotify IN_MODIFY, which a write or truncate sends when it
// completes). The returned function reports whether one was seen since,
// and ends the watch. ok is false when no watch could be set up.
func (n *Node) WatchWrites() (written func() bool, ok bool) {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, false
	}
	if _, err := unix.InotifyAddWatch(in, n.proc(), unix.IN_MODIFY); err != nil {
		unix.Close(in)
		return nil, false
	}
	return func() bool {
		defer unix.Close(in)
		buf := make([]byte, 4096)
		for {
			m, err := unix.Read(in, buf)
			if err == unix.EINTR {
				continue
			}
			// Any event (IN_MODIFY, or IN_Q_OVERFLOW) is a write; EAGAIN is none.
			return err == nil && m > 0 || err != nil && err != unix.EAGAIN
		}
	}, true
}
