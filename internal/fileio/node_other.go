//go:build unix && !linux

package fileio

import "golang.org/x/sys/unix"

// Chown sets the node's owner and group: fchownat(AT_SYMLINK_NOFOLLOW).
func (n *Node) Chown(uid, gid int) error {
	if err := n.d.faultSet().inject(OpChown, n.path); err != nil {
		return pathErr("chown", n.path, err)
	}
	return Lchown(n.d, n.name, uid, gid)
}

// Chmod sets the mode of name in d without following a symlink
// (fchmodat(AT_SYMLINK_NOFOLLOW)).
func Chmod(d *Dir, name string, mode uint32) error {
	return pathErr("chmod", d.join(name), ignoringEINTR(func() error {
		return unix.Fchmodat(d.fd, name, mode&0o7777, unix.AT_SYMLINK_NOFOLLOW)
	}))
}

// CopyXattrsToNode copies extended attributes to a node; see CopyXattrsAt.
func CopyXattrsToNode(src *Dir, srcName string, dst *Node, follow, all bool) error {
	return CopyXattrsAt(src, srcName, dst.d, dst.name, follow, all)
}
