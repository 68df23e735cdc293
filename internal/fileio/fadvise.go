//go:build linux || freebsd

package fileio

import "golang.org/x/sys/unix"

// DropCache asks the kernel to drop the file's clean cached pages
// (POSIX_FADV_DONTNEED), so that the next read comes from the device. On
// FreeBSD, UFS frees them; ZFS keeps its ARC whatever it is told, so a
// read-back on ZFS may still come from memory.
func (f *File) DropCache() error {
	return pathErr("fadvise", f.path, unix.Fadvise(f.fd, 0, 0, unix.FADV_DONTNEED))
}

// AdviseSequential tells the kernel the file is read once, front to back.
func (f *File) AdviseSequential() {
	_ = unix.Fadvise(f.fd, 0, 0, unix.FADV_SEQUENTIAL)
}

// DropRange drops the clean cached pages of n bytes at off
// (POSIX_FADV_DONTNEED); pages still dirty or under writeback stay.
func (f *File) DropRange(off, n int64) {
	_ = unix.Fadvise(f.fd, off, n, unix.FADV_DONTNEED)
}

// CanPrefetch says Prefetch starts reads here (and DropCache drops pages),
// so that opening files ahead of their use pays.
const CanPrefetch = true

// Prefetch asks the kernel to start reading n bytes at off into the page
// cache (POSIX_FADV_WILLNEED) and returns without waiting for them.
func (f *File) Prefetch(off, n int64) {
	if f.faults.inject(OpPrefetch, f.path) != nil {
		return
	}
	_ = unix.Fadvise(f.fd, off, n, unix.FADV_WILLNEED)
}
