package fileio

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Within reports whether the directory a is the directory b or lies below
// it, by identity (device and inode), never by a name: a symlink, a bind
// mount or a second mount of a filesystem puts one directory at several
// paths. It walks up from a as the kernel resolves "..", across mount
// points (a directory below a mount point inside b is below b), and, at
// the root of a mount of a directory of a filesystem (a bind mount),
// also up from that directory's place in its own filesystem, found
// through another mount of that filesystem that shows it (its identity
// checked: a name in /proc/self/mountinfo is only where to look). Where
// no mount shows a directory's parent, nothing above it can be b either:
// b is open, so shown by some mount. An error reading a or b is returned;
// one met on the way up ends that branch of the walk.
func Within(a, b *Dir) (bool, error) {
	bst, err := b.Stat()
	if err != nil {
		return false, err
	}
	start, err := a.OpenSub(".")
	if err != nil {
		return false, err
	}
	type place struct {
		dev, ino uint64
		mnt      uint64
	}
	seen := map[place]bool{}
	var mounts []mountLine
	stack := []*Dir{start}
	defer func() { closeAll(stack) }()
	for len(stack) > 0 && len(seen) < 1<<14 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st, err := d.Stat()
		if err != nil {
			d.Close()
			continue
		}
		if st.Dev == bst.Dev && st.Ino == bst.Ino {
			d.Close()
			return true, nil
		}
		var stx unix.Statx_t
		serr := unix.Statx(d.fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_MNT_ID, &stx)
		at := place{st.Dev, st.Ino, stx.Mnt_id}
		if seen[at] {
			d.Close()
			continue
		}
		seen[at] = true
		if up, err := d.Parent(); err == nil {
			stack = append(stack, up)
		}
		if serr == nil && stx.Mask&unix.STATX_MNT_ID != 0 && stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0 {
			if mounts == nil {
				mounts = readMounts()
			}
			stack = append(stack, shownElsewhere(mounts, stx.Mnt_id, st)...)
		}
		d.Close()
	}
	return false, nil
}

// shownElsewhere opens, through each other mount of the same filesystem
// whose root lies above it, the directory st that mount id shows at its
// root, and returns those whose identity is st's.
func shownElsewhere(mounts []mountLine, id uint64, st Stat) []*Dir {
	var self *mountLine
	for i := range mounts {
		if mounts[i].id == strconv.FormatUint(id, 10) {
			self = &mounts[i]
		}
	}
	if self == nil || self.root == "/" || !strings.HasPrefix(self.root, "/") {
		return nil // the root of its filesystem, or not known
	}
	var found []*Dir
	for _, m := range mounts {
		if m.dev != self.dev || m.id == self.id || !within(self.root, m.root) || self.root == m.root {
			continue
		}
		rest := strings.TrimPrefix(self.root, strings.TrimSuffix(m.root, "/"))
		p := strings.TrimSuffix(m.point, "/") + rest
		d, err := OpenDir(p)
		if err != nil {
			continue
		}
		if dst, err := d.Stat(); err == nil && dst.Dev == st.Dev && dst.Ino == st.Ino {
			found = append(found, d)
			continue
		}
		d.Close()
	}
	return found
}

// readMounts reads /proc/self/mountinfo; nil (as empty) when it cannot.
func readMounts() []mountLine {
	mounts := []mountLine{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return mounts
	}
	defer f.Close()
	scanMountinfo(f, func(m mountLine) bool {
		mounts = append(mounts, m)
		return true
	})
	return mounts
}

func closeAll(ds []*Dir) {
	for _, d := range ds {
		d.Close()
	}
}
