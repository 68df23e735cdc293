package fileio

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// listDir reads the directory open at fd with getdents64, keeping each
// name's inode number (d_ino), which os.File.ReadDir drops, and closes fd.
// The names come in the directory's own order; "." and ".." are left out.
func listDir(fd int, path string) ([]DirEntry, error) {
	defer unix.Close(fd)
	var out []DirEntry
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, pathErr("readdir", path, err)
		}
		if n <= 0 {
			return out, nil
		}
		b := buf[:n]
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for len(b) >= 19 {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			ino := binary.NativeEndian.Uint64(b[0:8])
			typ := b[18]
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			s := string(name)
			if s == "." || s == ".." || s == "" {
				continue
			}
			t := direntType(typ)
			if typ == unix.DT_UNKNOWN {
				// Not every filesystem says (xfs without ftype, some
				// FUSE drivers): ask, as os.ReadDir does.
				var st unix.Stat_t
				if unix.Fstatat(fd, s, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
					t = uint32(st.Mode) & unix.S_IFMT
				}
			}
			out = append(out, DirEntry{Name: s, Type: t, Ino: ino})
		}
	}
}

// direntType maps a d_type to the Mode* constants (0: not reported).
func direntType(t uint8) uint32 {
	switch t {
	case unix.DT_REG:
		return ModeRegular
	case unix.DT_DIR:
		return ModeDir
	case unix.DT_LNK:
		return ModeSymlink
	case unix.DT_FIFO:
		return ModeFIFO
	case unix.DT_SOCK:
		return ModeSocket
	case unix.DT_BLK:
		return ModeBlock
	case unix.DT_CHR:
		return ModeChar
	}
	return 0
}
