//go:build windows

package fileio

// Chown accepts only "leave unchanged"; see chown.
func (n *Node) Chown(uid, gid int) error { return pathErr("chown", n.path, chown(uid, gid)) }

// CopyXattrsToNode returns an error that IsFallback accepts; see CopyXattrs.
func CopyXattrsToNode(src *Dir, srcName string, dst *Node, follow, all bool) error {
	return pathErr("listxattr", src.join(srcName), ErrUnsupported)
}
