//go:build linux || darwin || freebsd

package fileio

import "golang.org/x/sys/unix"

// NextData returns the offset of the first data byte at or after off, and
// the offset of the hole that ends that data run. At or past the last data
// it returns (size, size, nil). Where SEEK_DATA is not supported it returns
// an error that IsFallback accepts.
//
// The hole map is the filesystem's word, which filesystems have got wrong;
// digests are never computed through it (see verify.HashFile).
func (f *File) NextData(off, size int64) (data, hole int64, err error) {
	if ferr := f.faults.inject(OpSeekData, f.path); ferr != nil {
		err = ferr // a fault of ENXIO: a map that shows no more data
	} else {
		data, err = unix.Seek(f.fd, off, unix.SEEK_DATA)
	}
	if err == unix.ENXIO {
		return size, size, nil
	}
	if err != nil {
		return 0, 0, pathErr("seek", f.path, err)
	}
	hole, err = unix.Seek(f.fd, data, unix.SEEK_HOLE)
	if err != nil {
		return 0, 0, pathErr("seek", f.path, err)
	}
	if hole > size {
		hole = size
	}
	return data, hole, nil
}
