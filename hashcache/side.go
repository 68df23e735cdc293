package hashcache

import (
	"path/filepath"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Side is one side of a copy (a source root, or the destination) as the
// cache sees it: the absolute path its keys start with and the validity
// policy of its filesystem.
type Side struct {
	Abs    string
	Policy Policy
}

// SideOf is the side whose root is the directory dir.
func SideOf(dir string) Side {
	abs := fileio.RealPath(dir)
	fsType, _ := fileio.FSType(abs)
	return Side{Abs: abs, Policy: PolicyFor(fsType)}
}

// Key is the cache key of rel ("/"-separated, relative to the side's root;
// "" for the root itself).
func (s Side) Key(rel string) string {
	if rel == "" {
		return s.Abs
	}
	return filepath.Join(s.Abs, filepath.FromSlash(rel))
}

// StateOf is the state of a file as the cache compares it, from its stat
// and the identity of the volume it is on.
func StateOf(st *fileio.Stat, vol Volume) FileState {
	return FileState{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Volume: vol}
}
