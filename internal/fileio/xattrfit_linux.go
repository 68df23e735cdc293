package fileio

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// xattrSizeError is the refusal of one attribute for its size. The errno
// setxattr answered is in its message and not in its chain, so that an
// ENOSPC of this kind is not taken for a full destination.
type xattrSizeError struct {
	size  int
	errno unix.Errno
}

func (e *xattrSizeError) Error() string {
	return fmt.Sprintf("%d-byte value: %v (%v)", e.size, ErrXattrTooLarge, e.errno)
}

func (e *xattrSizeError) Unwrap() error { return ErrXattrTooLarge }

// xattrSetErr classifies err, setxattr's answer for the attribute name
// with the value val on an object of the filesystem fd is on. E2BIG and
// ERANGE refuse its size (a value or name beyond the filesystem's limits).
// ENOSPC is ext4's and btrfs's answer for an attribute larger than an
// entry's room, and every filesystem's when it is full: it is taken for a
// refusal of the size only while the filesystem has room to spare
// (xattrRoom). Otherwise it stands, and a full destination is one.
func xattrSetErr(fd int, name string, val []byte, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case unix.E2BIG, unix.ERANGE:
		return &xattrSizeError{size: len(val), errno: errno}
	case unix.ENOSPC:
		if xattrRoom(fd, len(name)+len(val)) {
			return &xattrSizeError{size: len(val), errno: errno}
		}
	}
	return err
}

// xattrRoom reports whether the filesystem of fd has room to spare beyond
// an attribute of n bytes: free to an unprivileged writer (f_bavail) at
// least a sixteenth of its size, up to 16 MiB, plus n. An ext4 whose
// setxattr finds no free block shows next to nothing free (its data
// writes stop with at most a few hundred KiB shown, what its delayed
// allocation holds back); one that refuses an attribute for its size has
// whatever it had. When statfs does not answer, there is no room.
func xattrRoom(fd int, n int) bool {
	var st unix.Statfs_t
	if ignoringEINTR(func() error { return unix.Fstatfs(fd, &st) }) != nil {
		return false
	}
	unit := statfsUnit(&st)
	total, free := int64(st.Blocks)*unit, int64(st.Bavail)*unit
	return total > 0 && free >= min(16<<20, total/16)+int64(n)
}

// xattrSkipped keeps the first attribute an entry's copy left out for its
// size, so that the attributes after it are still set; err is what the
// copy returns once all were tried.
type xattrSkipped struct{ err error }

// note takes err, an attribute's setxattr error already classified, and
// reports whether the copy goes on with the next attribute.
func (s *xattrSkipped) note(err error) bool {
	if !errors.Is(err, ErrXattrTooLarge) {
		return false
	}
	if s.err == nil {
		s.err = err
	}
	return true
}
