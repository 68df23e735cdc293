package fileio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// Filesystem magic numbers from linux/magic.h and the drivers.
var fsMagic = map[uint32]string{
	0xEF53:     "ext4", // ext2, ext3 and ext4 share it
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x01021994: "tmpfs",
	0x858458F6: "ramfs",
	0x4d44:     "vfat", // vfat and msdos
	0x2011BAB0: "exfat",
	0x5346544e: "ntfs",  // the old read-only driver
	0x7366746e: "ntfs3", // the read-write driver since Linux 5.15
	0x6969:     "nfs",
	0x794c7630: "overlay",
	0xF2F52010: "f2fs",
	0x2fc12fc1: "zfs",
	0xca451a4e: "bcachefs",
	0xFF534D42: "cifs",
	0xFE534D42: "smb3",
}

// FSType returns the type of the filesystem holding path, with the names
// hashcache.PolicyFor knows ("ext4", "xfs", "vfat", "fuseblk", "fuse.sshfs", ...), or ""
// when it is none of them. For FUSE (and virtiofs, which shares FUSE's magic
// number) the name comes from /proc/self/mountinfo, which carries the
// subtype.
func FSType(path string) (string, error) {
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(path, &sfs); err != nil {
		return "", &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	magic := uint32(sfs.Type)
	if magic != fuseSuperMagic {
		return fsMagic[magic], nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "fuse", nil
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "fuse", nil
	}
	defer f.Close()
	if t := mountType(f, uint64(st.Dev), RealPath(path)); t != "" {
		return t, nil
	}
	return "fuse", nil
}

// mountType reads mountinfo and returns the filesystem type of the mount
// with device number dev; when several mounts share it (bind mounts), the one
// whose mount point is the longest prefix of path wins.
func mountType(r io.Reader, dev uint64, path string) string {
	want := fmt.Sprintf("%d:%d", devMajor(dev), devMinor(dev))
	best, bestLen := "", -1
	scanMountinfo(r, func(m mountLine) bool {
		if m.dev != want {
			return true
		}
		n := 0 // a mount that does not contain path still beats no match
		if within(path, m.point) {
			n = len(m.point) + 1
		}
		if n >= bestLen {
			best, bestLen = m.fsType, n
		}
		return true
	})
	return best
}

// scanMountinfo calls fn with each mount of mountinfo until fn returns false.
func scanMountinfo(r io.Reader, fn func(mountLine) bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m, ok := parseMountinfo(sc.Bytes()); ok && !fn(m) {
			return
		}
	}
}

type mountLine struct {
	id     string // the mount ID
	dev    string // "major:minor"
	root   string // unescaped: the directory of the filesystem mounted there
	point  string // unescaped mount point
	fsType string
	source string // "" when the line has none
}

// parseMountinfo parses one line of /proc/self/mountinfo (proc(5)):
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
func parseMountinfo(line []byte) (mountLine, bool) {
	f := strings.Fields(string(line))
	if len(f) < 7 {
		return mountLine{}, false
	}
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+1 >= len(f) {
		return mountLine{}, false
	}
	m := mountLine{id: f[0], dev: f[2], root: unescapeMount(f[3]), point: unescapeMount(f[4]), fsType: f[sep+1]}
	if sep+2 < len(f) {
		m.source = unescapeMount(f[sep+2])
	}
	return m, true
}

// unescapeMount undoes the octal escapes (\040 for a space, \011, \012,
// \134) the kernel writes in mount points.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// devMajor and devMinor decode a Linux dev_t as glibc's gnu_dev_major and
// gnu_dev_minor do.
func devMajor(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&^0xfff }
func devMinor(dev uint64) uint64 { return dev&0xff | (dev>>12)&^0xff }
