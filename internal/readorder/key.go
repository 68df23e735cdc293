package readorder

import "github.com/fastcopy/fastcopy/internal/fileio"

// KeyOf is the key of the file name in d, of stat st, for order (disk or
// inode): its inode, and in disk order the place of its first data (asked
// of the filesystem: none for an empty file, which has no data).
func KeyOf(order Order, d *fileio.Dir, name string, st *fileio.Stat) Key {
	k := Key{Ino: st.Ino}
	if order == Disk && st.Size > 0 {
		k.Phys, k.Known = fileio.PhysicalStart(d, name)
	}
	return k
}
