//go:build !(linux || darwin || freebsd)

package fileio

// SpaceOf reports that this platform's free space is not asked here: the
// run goes on without the check.
func SpaceOf(path string) (Space, error) { return Space{}, pathErr("statfs", path, ErrUnsupported) }
