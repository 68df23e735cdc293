//go:build linux || darwin

package fileio

import "golang.org/x/sys/unix"

// getxattr reads one extended attribute of fd, growing the buffer until the
// value fits.
func getxattr(fd int, name string) ([]byte, error) {
	size := 256
	for {
		v := make([]byte, size)
		n, err := unix.Fgetxattr(fd, name, v)
		if err == unix.ERANGE {
			size *= 4
			continue
		}
		if err != nil {
			return nil, err
		}
		return v[:n], nil
	}
}
