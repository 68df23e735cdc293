//go:build linux

package fileio

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CopyXattrsAt copies the extended attributes of srcName in src to dstName
// in dst, for entries that cannot be opened to use CopyXattrs: symlinks,
// FIFOs, sockets and devices (which carry trusted.* and security.*
// attributes; Linux allows user.* only on files and directories). A symlink
// at srcName is followed only with follow; one at dstName never is. Without
// all, only the user namespace and the POSIX ACLs are copied. Like
// CopyXattrs it returns an error only for an attribute that could be read
// but not set, and one refused for its size (ErrXattrTooLarge) only once
// the others were set.
//
// The l*xattr calls take a path: each entry is named through its
// directory's descriptor in /proc/self/fd, which is short at any depth and
// does not resolve the directory again. Without /proc it returns
// ErrUnsupported.
func CopyXattrsAt(src *Dir, srcName string, dst *Dir, dstName string, follow, all bool) error {
	dp := "/proc/self/fd/" + strconv.Itoa(dst.fd) + "/" + dstName
	return copyXattrsFromPath(src, srcName, follow, all, func(name string, val []byte) error {
		if err := unix.Lsetxattr(dp, name, val, 0); err != nil {
			return pathErr("setxattr "+name, dst.join(dstName), xattrSetErr(dst.fd, name, val, err))
		}
		return nil
	})
}

// CopyXattrsToNode is CopyXattrsAt onto a Node: each attribute is set with
// setxattr on the node's /proc/self/fd name, which reaches the object
// OpenNode opened (never a symlink) whatever its name points to now.
func CopyXattrsToNode(src *Dir, srcName string, dst *Node, follow, all bool) error {
	return copyXattrsFromPath(src, srcName, follow, all, func(name string, val []byte) error {
		if err := unix.Setxattr(dst.proc(), name, val, 0); err != nil {
			return pathErr("setxattr "+name, dst.path, xattrSetErr(dst.fd, name, val, procErr(err)))
		}
		return nil
	})
}

func copyXattrsFromPath(src *Dir, srcName string, follow, all bool, set func(name string, val []byte) error) error {
	sp := "/proc/self/fd/" + strconv.Itoa(src.fd) + "/" + srcName
	list, get := unix.Llistxattr, unix.Lgetxattr
	if follow {
		list, get = unix.Listxattr, unix.Getxattr
	}
	buf := make([]byte, 1024)
	var n int
	var err error
	for {
		n, err = list(sp, buf)
		if err == unix.ERANGE {
			buf = make([]byte, len(buf)*4)
			continue
		}
		break
	}
	if err == unix.ENOENT {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return pathErr("listxattr", src.join(srcName), ErrUnsupported)
		}
	}
	if err != nil || n == 0 {
		return nil // no attributes, or a filesystem without them
	}
	var skipped xattrSkipped
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if name == "" || (!all && !unprivileged(name)) {
			continue
		}
		val := make([]byte, 256)
		for {
			var m int
			m, err = get(sp, name, val)
			if err == unix.ERANGE {
				val = make([]byte, len(val)*4)
				continue
			}
			val = val[:max(m, 0)]
			break
		}
		if err != nil {
			continue
		}
		if err := set(name, val); err != nil {
			if skipped.note(err) {
				continue
			}
			return err
		}
	}
	return skipped.err
}
