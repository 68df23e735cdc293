//go:build unix && !linux

package fileio

import "golang.org/x/sys/unix"

// Node is an entry of a directory held for metadata changes. Without
// O_PATH it is named through its directory's descriptor, and every call
// takes AT_SYMLINK_NOFOLLOW: a symlink swapped in for the name is changed
// itself (or refused), never followed out of the directory.
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
		return nil, pathErr("open", d.join(name), unix.ELOOP)
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
		return nil, pathErr("open", d.join(name), unix.EINVAL)
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

// Chmod sets the node's mode: fchmodat(AT_SYMLINK_NOFOLLOW).
func (n *Node) Chmod(mode uint32) error {
	if err := inject(OpChmod, n.path); err != nil {
		return pathErr("chmod", n.path, err)
	}
	return n.d.Chmod(n.name, mode)
}

// Chown sets the node's owner and group: fchownat(AT_SYMLINK_NOFOLLOW).
func (n *Node) Chown(uid, gid int) error {
	if err := inject(OpChown, n.path); err != nil {
		return pathErr("chown", n.path, err)
	}
	return n.d.Lchown(n.name, uid, gid)
}

// SetTimes sets the node's times: utimensat(AT_SYMLINK_NOFOLLOW).
func (n *Node) SetTimes(atime, mtime int64) error {
	if err := inject(OpUtimes, n.path); err != nil {
		return pathErr("utimes", n.path, err)
	}
	return n.d.Lutimes(n.name, atime, mtime)
}

// Chmod sets the mode of name without following a symlink
// (fchmodat(AT_SYMLINK_NOFOLLOW)).
func (d *Dir) Chmod(name string, mode uint32) error {
	return pathErr("chmod", d.join(name), ignoringEINTR(func() error {
		return unix.Fchmodat(d.fd, name, mode&0o7777, unix.AT_SYMLINK_NOFOLLOW)
	}))
}

// CopyXattrsToNode copies extended attributes to a node; see CopyXattrsAt.
func CopyXattrsToNode(src *Dir, srcName string, dst *Node, follow, all bool) error {
	return CopyXattrsAt(src, srcName, dst.d, dst.name, follow, all)
}

// WatchWrites cannot watch a node for writes here: ok is false.
func (n *Node) WatchWrites() (written func() bool, ok bool) { return nil, false }
