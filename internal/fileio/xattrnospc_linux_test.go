package fileio

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestXattrnospcClassify: setxattr's E2BIG and ERANGE are refusals of the
// attribute's size, and so is ENOSPC on a filesystem with room to spare;
// none of them is a full destination (IsNoSpace). Other errors pass as
// they are.
func TestXattrnospcClassify(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(d.fd, &st); err != nil {
		t.Fatal(err)
	}
	roomy := int64(st.Bavail)*statfsUnit(&st) >= 16<<20+1<<16
	val := make([]byte, 12<<10)
	for _, c := range []struct {
		errno    unix.Errno
		tooLarge bool
	}{
		{unix.E2BIG, true},
		{unix.ERANGE, true},
		{unix.ENOSPC, roomy},
		{unix.EIO, false},
		{unix.ENOTSUP, false},
	} {
		err := xattrSetErr(d.fd, "user.big", val, c.errno)
		if got := errors.Is(err, ErrXattrTooLarge); got != c.tooLarge {
			t.Errorf("%v: too large %v (%v), want %v", c.errno, got, err, c.tooLarge)
		}
		if c.tooLarge && IsNoSpace(err) {
			t.Errorf("%v: %v reads as no space", c.errno, err)
		}
		if !c.tooLarge && !errors.Is(err, c.errno) {
			t.Errorf("%v: became %v", c.errno, err)
		}
	}
	if !roomy {
		t.Logf("%s has under 16 MiB free: ENOSPC was checked as a full filesystem's", d.path)
	}
}
