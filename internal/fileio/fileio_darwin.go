//go:build darwin

package fileio

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// fdatasync flushes with F_FULLFSYNC: on darwin fsync(2) stops at the
// drive's volatile cache, and only F_FULLFSYNC asks the drive to write it
// out. Filesystems that refuse it (SMB, some FAT drivers) get fsync(2), as
// the Go runtime does for os.File.Sync.
func fdatasync(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0)
	if err == unix.ENOTSUP {
		return unix.Fsync(fd)
	}
	return err
}

// futimens sets the times of fd with futimes(2), which keeps microseconds:
// darwin's futimens(3) has no wrapper in x/sys and there is no AT_EMPTY_PATH
// to reach the descriptor through utimensat(2). The nanoseconds below the
// microsecond are dropped (truncated, never rounded up), so a copy's times
// on APFS can be up to 999ns earlier than its source's. Lutimes, which
// goes through the directory, keeps nanoseconds.
func futimens(fd int, ts []unix.Timespec) error {
	tv := []unix.Timeval{toTimeval(ts[0]), toTimeval(ts[1])}
	return unix.Futimes(fd, tv)
}

func toTimeval(ts unix.Timespec) unix.Timeval {
	return unix.Timeval{Sec: ts.Sec, Usec: int32(ts.Nsec / 1000)}
}

// mknodat cannot create a node relative to a directory on darwin: x/sys
// wraps neither mknodat nor mkfifoat there, and a path-based mknod(2) or
// mkfifo(2) could be redirected through a symlink in the path.
func mknodat(dirfd int, name string, mode uint32, rdev uint64) error {
	return fmt.Errorf("creating a %s is not supported on darwin: %w", describe(mode), ErrUnsupported)
}

// openBeneath opens rel below dirfd with O_NOFOLLOW_ANY (macOS 11 and
// later, which every Go release that builds this supports), which fails
// with ELOOP on a symlink anywhere in rel. Like RESOLVE_BENEATH on Linux, a
// ".." component or an absolute rel fails with EXDEV. A rel longer than
// darwin's PATH_MAX is left to the caller's component-by-component walk.
func openBeneath(dirfd int, rel string) (int, error) {
	if strings.HasPrefix(rel, "/") {
		return -1, unix.EXDEV
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return -1, unix.EXDEV
		}
	}
	for {
		fd, err := unix.Openat(dirfd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW_ANY|unix.O_CLOEXEC, 0)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR:
			continue
		case unix.ENAMETOOLONG:
			return -1, ErrUnsupported
		}
		return -1, err
	}
}

// Clone makes f share src's data blocks (clonefile(2), APFS). It returns an
// error that IsFallback accepts when the filesystem cannot clone or the two
// files are on different filesystems.
//
// clonefile(2) creates its destination, and f already exists, so the clone
// is made under a sibling name in f's directory, given mode 0600 and
// renamed over f's name; f's descriptor is then made to refer to it with
// dup2(2), so the caller keeps using f. Beforehand f's directory, found
// from f's path, is checked to hold f's inode under f's name, and f to have
// no other name, so nothing else is ever replaced. The clone carries src's
// extended attributes and ACL (clonefile copies them); its owner is the
// caller's (CLONE_NOOWNERCOPY).
func (f *File) Clone(src *File) error {
	if err := f.faults.inject(OpClone, f.path); err != nil {
		return pathErr("clone", f.path, err)
	}
	return pathErr("clone", f.path, f.clone(src))
}

func (f *File) clone(src *File) error {
	var sst, dst unix.Stat_t
	if err := unix.Fstat(src.fd, &sst); err != nil {
		return err
	}
	if err := unix.Fstat(f.fd, &dst); err != nil {
		return err
	}
	if sst.Dev != dst.Dev {
		return unix.EXDEV
	}
	base := filepath.Base(f.path)
	var dirfd int
	err := ignoringEINTR(func() (err error) {
		dirfd, err = unix.Open(filepath.Dir(f.path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	var cur unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &cur, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if cur.Dev != dst.Dev || cur.Ino != dst.Ino || dst.Nlink != 1 {
		return errors.New("its name no longer refers to it alone; not cloning onto it")
	}
	// Shaped like the engine's temporaries, so that a run interrupted here
	// leaves a name the next run removes, but with a stem no source name
	// is likely to have. One left by a crash is removed and tried again.
	tmp := fmt.Sprintf(".fastcopy-clone-%x.fastcopy-tmp", dst.Ino)
	const flags = unix.CLONE_NOFOLLOW | unix.CLONE_NOOWNERCOPY
	err = unix.Fclonefileat(src.fd, dirfd, tmp, flags)
	if err == unix.EEXIST {
		if err = unix.Unlinkat(dirfd, tmp, 0); err == nil {
			err = unix.Fclonefileat(src.fd, dirfd, tmp, flags)
		}
	}
	if err != nil {
		return err
	}
	var nfd int
	err = ignoringEINTR(func() (err error) {
		nfd, err = unix.Openat(dirfd, tmp, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	defer unix.Close(nfd)
	if err := unix.Fchmod(nfd, 0o600); err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	// The clone is in place under f's name; the old, now nameless inode
	// goes when f's descriptor stops referring to it.
	if err := ignoringEINTR(func() error { return unix.Dup2(nfd, f.fd) }); err != nil {
		return fmt.Errorf("cloned, but cannot switch to the clone: %w", err)
	}
	// dup2 clears close-on-exec.
	_, _ = unix.FcntlInt(uintptr(f.fd), unix.F_SETFD, unix.FD_CLOEXEC)
	return nil
}

// DropCache would drop the file's cached pages so that the next read comes
// from the device. darwin has no such call: F_NOCACHE only keeps later
// reads through this descriptor from adding pages, and pages already cached
// (those of a file just written) are still read from memory. It returns an
// error that IsFallback accepts.
func (f *File) DropCache() error {
	return pathErr("fadvise", f.path, ErrUnsupported)
}

// AdviseSequential does nothing: darwin reads ahead by default (F_RDAHEAD)
// and has no other advice to give.
func (f *File) AdviseSequential() {}

// Prefetch does nothing on darwin: its equivalent (fcntl F_RDADVISE) takes a
// pointer that golang.org/x/sys/unix has no wrapper to pass.
func (f *File) Prefetch(off, n int64) {}

// CanPrefetch is false: Prefetch does nothing here, so files are not
// opened ahead of their use.
const CanPrefetch = false

// Syncfs returns an error that IsFallback accepts: darwin has no syncfs(2),
// and sync(2) returns before the data is written, so it would be no
// guarantee. The engine then flushes each file (File.Sync) and each
// directory it wrote.
func Syncfs(d *Dir) error {
	if err := d.faults.inject(OpSync, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	if err := d.faults.inject(OpSyncfs, d.path); err != nil {
		return pathErr("syncfs", d.path, err)
	}
	// sync(2) only starts the writes and returns: start them (so the
	// per-file flushes that follow find less to do), then say that no
	// filesystem-wide flush that waits exists here, and the engine flushes
	// each file and directory itself.
	_ = unix.Sync()
	return pathErr("syncfs", d.path, ErrUnsupported)
}

// CopyXattrs copies the extended attributes of src to dst. darwin has no
// namespaces: every attribute is copied whatever all says, except that an
// attribute the system keeps for itself (com.apple.*, such as
// com.apple.provenance or com.apple.rootless) and refuses to let this
// process set is skipped. It returns an error only for an attribute that
// could be read but not set otherwise.
func CopyXattrs(src, dst *File, all bool) error {
	names, err := listxattr(src.fd)
	if err != nil || len(names) == 0 {
		return nil // no attributes, or a filesystem without them
	}
	for _, name := range names {
		val, err := getxattr(src.fd, name)
		if err != nil {
			continue
		}
		if err := unix.Fsetxattr(dst.fd, name, val, 0); err != nil {
			if (err == unix.EPERM || err == unix.EACCES) && strings.HasPrefix(name, "com.apple.") {
				continue
			}
			return pathErr("setxattr "+name, dst.path, err)
		}
	}
	return nil
}

// Xattrs lists the extended attributes of f with their values (for
// comparisons in tests and the verifier).
func Xattrs(f *File) (map[string][]byte, error) {
	names, err := listxattr(f.fd)
	if err != nil {
		if err == unix.ENOTSUP {
			return nil, nil
		}
		return nil, pathErr("listxattr", f.path, err)
	}
	out := map[string][]byte{}
	for _, name := range names {
		v, err := getxattr(f.fd, name)
		if err != nil {
			return nil, pathErr("getxattr", f.path, err)
		}
		out[name] = v
	}
	return out, nil
}

func listxattr(fd int) ([]string, error) {
	for {
		n, err := unix.Flistxattr(fd, nil)
		if err != nil || n == 0 {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = unix.Flistxattr(fd, buf)
		if err == unix.ERANGE {
			continue // an attribute was added between the two calls
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, name := range strings.Split(string(buf[:n]), "\x00") {
			if name != "" {
				names = append(names, name)
			}
		}
		return names, nil
	}
}

// DropRange does nothing on darwin: there is no per-range advice to drop
// cached pages.
func (f *File) DropRange(off, n int64) {}

// CanStageDirs is false: a clone here finds the destination's directory by
// its path (see clone), which renaming a directory it is in would make
// stale, so new directories are made under their own names at once.
const CanStageDirs = false

// RenameDirNoReplace is not used on darwin (CanStageDirs is false).
func RenameDirNoReplace(d *Dir, oldName, newName string) error {
	return ErrUnsupported
}

// futimensExact says File.SetTimes keeps nanoseconds here (futimes(2) keeps microseconds).
const futimensExact = false
