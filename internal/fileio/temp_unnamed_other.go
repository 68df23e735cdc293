//go:build !linux

package fileio

// CreateUnnamed fails with ErrUnsupported: files without a name are a Linux
// feature (O_TMPFILE).
func CreateUnnamed(d *Dir) (*File, error) {
	return nil, pathErr("open", d.path, ErrUnsupported)
}
