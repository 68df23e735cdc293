//go:build unix && !linux

package fileio

// CopyXattrsAt copies the extended attributes of srcName in src to dstName
// in dst, for entries that cannot be opened (symlinks, FIFOs, sockets,
// devices). Here it is not implemented yet and returns ErrUnsupported.
func CopyXattrsAt(src *Dir, srcName string, dst *Dir, dstName string, follow, all bool) error {
	return pathErr("listxattr", src.join(srcName), ErrUnsupported)
}
