//go:build windows

package fileio

// Chown accepts only "leave unchanged"; see chown.
func (n *Node) Chown(uid, gid int) error { return pathErr("chown", n.path, chown(uid, gid)) }

// CopyXattrsToNode copies nothing; see CopyXattrs.
func CopyXattrsToNode(src *Dir, srcName string, dst *Node, follow, all bool) error {
	return nil // none of the Unix kind here: see CopyXattrs
}
