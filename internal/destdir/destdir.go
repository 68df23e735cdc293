package destdir

import (
	"fmt"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Ensure makes the directory name in dir, or finds it there: created
// says which. st is the stat of the one found (zero when created); a
// name there that is not a directory is refused (srcPath names the
// source directory it would be the copy of).
func Ensure(dir *fileio.Dir, name, srcPath string) (created bool, st fileio.Stat, err error) {
	err = dir.Mkdir(name, 0o700)
	if err == nil {
		return true, fileio.Stat{}, nil
	}
	if !fileio.IsExist(err) {
		return false, fileio.Stat{}, err
	}
	if st, err = dir.Lstat(name); err != nil {
		return false, fileio.Stat{}, err
	}
	if !st.IsDir() {
		return false, st, NotDir(&st, srcPath)
	}
	return false, st, nil
}

// NotDir is the refusal of a destination entry of stat st that is not a
// directory where the source (srcPath; "" when the caller's path names
// it) is one.
func NotDir(st *fileio.Stat, srcPath string) error {
	if srcPath == "" {
		return fmt.Errorf("destination exists and is a %s, but the source is a directory; remove it and rerun", fileio.Describe(st.Mode))
	}
	return fmt.Errorf("destination exists and is a %s, but the source %q is a directory; remove it and rerun", fileio.Describe(st.Mode), srcPath)
}

// Writable lets the owner write in an existing destination directory
// (name in dir, of stat st) that a previous run left read-only (as its
// source is), so that a non-root rerun can add to it. Root (privileged)
// needs no permission bits. The caller puts the source's mode back with
// the directory's times, after its contents.
func Writable(dir *fileio.Dir, name string, st fileio.Stat, privileged bool) {
	if privileged || st.Mode&0o300 == 0o300 {
		return
	}
	_ = fileio.Chmod(dir, name, st.Mode&0o7777|0o700)
}
