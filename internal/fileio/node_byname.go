//go:build !linux

package fileio

import "syscall"

// Node is an entry of a directory held for metadata changes. Without
// O_PATH it is named through its directory: on Unix every call takes
// AT_SYMLINK_NOFOLLOW, so a symlink swapped in for the name is changed
// itself (or refused), never followed out of the directory; on Windows each
// call opens it with FILE_FLAG_OPEN_REPARSE_POINT or acts on the name.
type Node struct {
	d    *Dir
	name string
	path string
	st   Stat
}

// OpenNode looks up name without following a symlink, for metadata
// changes. A symlink is refused (ELOOP).
func (d *Dir) OpenNode(name string) (*Node, error) {
	st, err := d.Lstat(name)
	if err != nil {
		return nil, err
	}
	if st.IsSymlink() {
		return nil, pathErr("open", d.join(name), syscall.ELOOP)
	}
	return &Node{d: d, name: name, path: d.join(name), st: st}, nil
}

// OpenSymlinkNode looks up the symlink name, for setting its owner and
// times: the calls act on the name without following it. Anything but a
// symlink is refused (EINVAL).
func (d *Dir) OpenSymlinkNode(name string) (*Node, error) {
	st, err := d.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.IsSymlink() {
		return nil, pathErr("open", d.join(name), syscall.EINVAL)
	}
	return &Node{d: d, name: name, path: d.join(name), st: st}, nil
}

// Stat returns the metadata of the node as it was when opened.
func (n *Node) Stat() Stat { return n.st }

// Restat returns the node's current metadata.
func (n *Node) Restat() (Stat, error) { return n.d.Lstat(n.name) }

// Path returns the path the node was opened as (for messages).
func (n *Node) Path() string { return n.path }

// Close releases the node.
func (n *Node) Close() error { return nil }

// Chmod sets the node's mode through the function Chmod, by name:
// fchmodat(AT_SYMLINK_NOFOLLOW), or the read-only attribute on Windows.
func (n *Node) Chmod(mode uint32) error {
	if err := n.d.faultSet().inject(OpChmod, n.path); err != nil {
		return pathErr("chmod", n.path, err)
	}
	return Chmod(n.d, n.name, mode)
}

// SetTimes sets the node's times through Lutimes, by name, which does not
// follow a symlink.
func (n *Node) SetTimes(atime, mtime int64) error {
	if err := n.d.faultSet().inject(OpUtimes, n.path); err != nil {
		return pathErr("utimes", n.path, err)
	}
	return Lutimes(n.d, n.name, atime, mtime)
}

// WatchWrites cannot watch a node for writes here: ok is false.
func (n *Node) WatchWrites() (written func() bool, ok bool) { return nil, false }
