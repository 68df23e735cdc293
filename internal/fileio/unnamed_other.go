//go:build !linux

package fileio

// CreateUnnamed fails with ErrUnsupported: files without a name are a Linux
// feature (O_TMPFILE).
func (d *Dir) CreateUnnamed() (*File, error) {
	return nil, pathErr("open", d.path, ErrUnsupported)
}
