package fileio

import (
	"errors"
	"fmt"
)

// ErrNotRegular is ReadRegular's error for a name that is not a regular
// file (a directory, a symlink, a device).
var ErrNotRegular = errors.New("is not a regular file")

// ReadRegular reads the whole regular file name in d, not following a
// symlink: the small records fastcopy reads back (an ASC MHL chain or
// generation, a bag's tag files).
func ReadRegular(d *Dir, name string) ([]byte, error) {
	f, err := d.Open(name, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.IsRegular() {
		return nil, fmt.Errorf("%q %w", f.Path(), ErrNotRegular)
	}
	buf := make([]byte, st.Size)
	n, err := f.ReadFull(buf, 0)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}
