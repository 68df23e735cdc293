package meta

import (
	"bytes"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// SameXattrs compares the extended attributes of sname in sd (its
// target when deref) with those of tname in td, counting only the names
// keep accepts. It is false when either side cannot be opened or read.
func SameXattrs(sd *fileio.Dir, sname string, deref bool, td *fileio.Dir, tname string, keep func(name string) bool) bool {
	sf, err := sd.Open(sname, deref)
	if err != nil {
		return false
	}
	defer sf.Close()
	tf, err := td.Open(tname, false)
	if err != nil {
		return false
	}
	defer tf.Close()
	a, err1 := fileio.Xattrs(sf)
	b, err2 := fileio.Xattrs(tf)
	if err1 != nil || err2 != nil {
		return false
	}
	kept := func(m map[string][]byte) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range m {
			if keep(k) {
				out[k] = v
			}
		}
		return out
	}
	a, b = kept(a), kept(b)
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// KeptXattr reports whether a copy made as c gets the extended attribute
// name: every one as root, else the user namespace and the POSIX ACLs.
func (c *Config) KeptXattr(name string) bool {
	return c.Root || strings.HasPrefix(name, "user.") || strings.HasPrefix(name, "system.posix_acl_")
}
