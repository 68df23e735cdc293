package fileio

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Inherit tells what a file created in d takes from the system (see
// Inherited). It asks once per open directory.
func (d *Dir) Inherit() Inherited {
	d.inheritOnce.Do(func() {
		st, err := fstat(d.fd, d.path)
		if err != nil {
			return
		}
		in := Inherited{Gid: uint32(unix.Getegid()), Known: true}
		if st.Mode&ModeSetgid != 0 {
			in.Gid = st.Gid
		}
		_, err = unix.Fgetxattr(d.fd, "system.posix_acl_default", nil)
		switch {
		case err == nil:
			in.DefaultACL = true
		case errors.Is(err, unix.ENODATA), errors.Is(err, unix.EOPNOTSUPP):
		default:
			return // cannot tell
		}
		d.inherit = in
	})
	return d.inherit
}

// Umask returns the process's umask, read from /proc/self/status (Linux
// 4.7 and later), which, unlike umask(2), does not change it for a moment
// under the feet of other threads. ok is false when it cannot be read.
func Umask() (mask uint32, ok bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, found := bytes.CutPrefix(sc.Bytes(), []byte("Umask:")); found {
			m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32)
			return uint32(m), err == nil
		}
	}
	return 0, false
}
