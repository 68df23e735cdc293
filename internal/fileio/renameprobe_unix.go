//go:build unix

package fileio

import (
	"bytes"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrRenameLoses is returned by ProbeDirRename when a file was not found,
// whole, in its directory after the directory was renamed.
var ErrRenameLoses = errors.New("a renamed directory lost the file written in it")

// ProbeDirRename asks the filesystem of d whether renaming a directory keeps
// what is in it: it makes the directory a, writes content to the file
// "f" in it, renames a to b (a name that must be free), and looks for the
// file under b, by listing b (which asks the filesystem, not the kernel's
// cache of names) and by reading it back. It removes what it made, and
// puts d's times back (its new entries moved them). It returns nil, an
// error wrapping ErrRenameLoses, or the error of a step that failed.
//
// Its calls are made directly, not through the fault seam: a probe is not
// one of the operations a test counts.
func ProbeDirRename(d *Dir, a, b string, content []byte) (err error) {
	var before unix.Stat_t
	if err := unix.Fstat(d.fd, &before); err != nil {
		return pathErr("stat", d.path, err)
	}
	if err := unix.Mkdirat(d.fd, a, 0o700); err != nil {
		return pathErr("mkdir", d.join(a), err)
	}
	defer func() {
		for _, name := range []string{a, b} {
			if fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
				_ = unix.Unlinkat(fd, "f", 0)
				unix.Close(fd)
				_ = unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR)
			}
		}
		var after unix.Stat_t
		if unix.Fstat(d.fd, &after) == nil && after.Mtim != before.Mtim {
			_ = futimens(d.fd, []unix.Timespec{before.Atim, before.Mtim})
		}
	}()
	sub, err := unix.Openat(d.fd, a, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathErr("open", d.join(a), err)
	}
	fd, err := unix.Openat(sub, "f", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	unix.Close(sub)
	if err != nil {
		return pathErr("create", d.join(a), err)
	}
	_, err = unix.Pwrite(fd, content, 0)
	unix.Close(fd)
	if err != nil {
		return pathErr("write", d.join(a), err)
	}
	if err := unix.Renameat(d.fd, a, d.fd, b); err != nil {
		return pathErr("rename", d.join(b), err)
	}
	sub, err = unix.Openat(d.fd, b, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathErr("open", d.join(b), err)
	}
	dir := os.NewFile(uintptr(sub), d.join(b))
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return pathErr("readdir", d.join(b), err)
	}
	listed := false
	for _, n := range names {
		listed = listed || n == "f"
	}
	if !listed {
		return pathErr("readdir", d.join(b), ErrRenameLoses)
	}
	fd, err = unix.Openat(sub, "f", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathErr("open", d.join(b)+"/f", errors.Join(ErrRenameLoses, err))
	}
	defer unix.Close(fd)
	got := make([]byte, len(content)+1)
	n, _ := unix.Pread(fd, got, 0)
	if n < 0 || !bytes.Equal(got[:n], content) {
		return pathErr("read", d.join(b)+"/f", ErrRenameLoses)
	}
	return nil
}
