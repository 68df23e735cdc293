//go:build linux

// Package treecmp compares two directory trees entry by entry, for the
// tests that hold fastcopy's copies against their sources and against
// cp -a's. It checks, for every entry: the type; the content of regular
// files; the permission bits with setuid, setgid and sticky; mtime (and, when
// asked, atime) to the nanosecond on files, directories and symlinks; owner
// and group; symlink targets; extended attributes; device numbers; which
// names share an inode (hard-link groups); and that a copy of a sparse file
// allocates no more blocks than its original, give or take a small slack.
//
// It walks both trees with directory descriptors (openat) and reads
// extended attributes through /proc/self/fd, so paths longer than PATH_MAX
// compare like any other. Files and directories are opened with O_NOATIME
// where the caller may, symlinks get their atime back after readlink, and
// every entry is stat'ed before it is read, so a comparison does not disturb
// the access times it compares.
//
// It is a test helper: it uses golang.org/x/sys directly, and it is not part
// of fastcopy's library.
package treecmp

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultBlockSlack is the BlockSlack used when Options.BlockSlack is 0: one
// extent-tree block of the common filesystems, and then some.
const DefaultBlockSlack = 64 << 10

// Options say what Compare checks beyond what it always checks.
type Options struct {
	// Atime compares access times too. Off by default: reading a file (to
	// copy it) may move its access time, so a copy made from a tree that
	// was read before carries the newer time.
	Atime bool
	// BlockSlack is how many bytes a regular file in b may allocate beyond
	// its counterpart in a before it counts as not sparse enough; 0 means
	// DefaultBlockSlack, a negative value allows no slack at all.
	BlockSlack int64
	// IgnoreBlocks turns the allocation check off (for filesystems that do
	// not report allocation faithfully, such as compressing ones).
	IgnoreBlocks bool
}

// entry is what Compare knows of one name in a tree.
type entry struct {
	st     unix.Stat_t
	target string            // symlinks
	sum    [sha256.Size]byte // regular files
	xattrs map[string]string
	links  []string // the names in the same tree sharing this inode, sorted
}

type inode struct{ dev, ino uint64 }

// tree is a walked tree: entries by slash-separated path relative to the
// root ("" is the root itself).
type tree struct {
	root    string
	entries map[string]*entry
	inodes  map[inode][]string
}

// Compare walks a and b and returns one line for each difference, naming
// the entry by its path relative to the roots (quoted with %q, so that names
// that are not UTF-8 or hold newlines stay readable) and the two values, a's
// first. Differences are sorted by path. The roots themselves are compared
// too (mode, owner, times, attributes). The error is for a tree that could
// not be read.
func Compare(a, b string, opts Options) ([]string, error) {
	ta, err := walk(a)
	if err != nil {
		return nil, err
	}
	tb, err := walk(b)
	if err != nil {
		return nil, err
	}
	slack := opts.BlockSlack
	switch {
	case slack == 0:
		slack = DefaultBlockSlack
	case slack < 0:
		slack = 0
	}
	paths := make([]string, 0, len(ta.entries)+len(tb.entries))
	for p := range ta.entries {
		paths = append(paths, p)
	}
	for p := range tb.entries {
		if _, ok := ta.entries[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var diffs []string
	for _, p := range paths {
		ea, eb := ta.entries[p], tb.entries[p]
		add := func(format string, args ...any) {
			diffs = append(diffs, fmt.Sprintf("%q: ", p)+fmt.Sprintf(format, args...))
		}
		switch {
		case eb == nil:
			add("only in %s (a %s)", a, kind(ea.st.Mode))
			continue
		case ea == nil:
			add("only in %s (a %s)", b, kind(eb.st.Mode))
			continue
		}
		compareEntry(ea, eb, opts, slack, add)
	}
	return diffs, nil
}

func compareEntry(ea, eb *entry, opts Options, slack int64, add func(string, ...any)) {
	sa, sb := &ea.st, &eb.st
	if sa.Mode&unix.S_IFMT != sb.Mode&unix.S_IFMT {
		add("type %s vs %s", kind(sa.Mode), kind(sb.Mode))
		return
	}
	if sa.Mode != sb.Mode {
		add("mode %s vs %s", modeString(sa.Mode), modeString(sb.Mode))
	}
	if sa.Uid != sb.Uid {
		add("owner uid %d vs %d", sa.Uid, sb.Uid)
	}
	if sa.Gid != sb.Gid {
		add("group gid %d vs %d", sa.Gid, sb.Gid)
	}
	if ma, mb := unix.TimespecToNsec(sa.Mtim), unix.TimespecToNsec(sb.Mtim); ma != mb {
		add("mtime %s vs %s", nsString(ma), nsString(mb))
	}
	if aa, ab := unix.TimespecToNsec(sa.Atim), unix.TimespecToNsec(sb.Atim); opts.Atime && aa != ab {
		add("atime %s vs %s", nsString(aa), nsString(ab))
	}
	switch sa.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if sa.Size != sb.Size {
			add("size %d vs %d", sa.Size, sb.Size)
		} else if ea.sum != eb.sum {
			add("content differs (same size %d)", sa.Size)
		}
		if !opts.IgnoreBlocks && sb.Blocks*512 > sa.Blocks*512+slack {
			add("allocates %d bytes vs %d (more than %d bytes beyond: holes filled in?)", sa.Blocks*512, sb.Blocks*512, slack)
		}
	case unix.S_IFLNK:
		if ea.target != eb.target {
			add("symlink target %q vs %q", ea.target, eb.target)
		}
	case unix.S_IFCHR, unix.S_IFBLK:
		if sa.Rdev != sb.Rdev {
			add("device %d:%d vs %d:%d", unix.Major(sa.Rdev), unix.Minor(sa.Rdev), unix.Major(sb.Rdev), unix.Minor(sb.Rdev))
		}
	}
	if !equalXattrs(ea.xattrs, eb.xattrs) {
		add("xattrs %s vs %s", xattrString(ea.xattrs), xattrString(eb.xattrs))
	}
	if !equalStrings(ea.links, eb.links) {
		add("hard links %s vs %s", quoteList(ea.links), quoteList(eb.links))
	}
}

// walk reads the tree at root, never following a symlink below it (the
// root itself may be one, as a command-line argument may).
func walk(root string) (*tree, error) {
	t := &tree{root: root, entries: map[string]*entry{}, inodes: map[inode][]string{}}
	fd, err := openDir(unix.AT_FDCWD, root, true)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: root, Err: err}
	}
	e := &entry{st: st}
	if e.xattrs, err = xattrsAt(fd, ".", root); err != nil {
		return nil, err
	}
	t.entries[""] = e
	if err := t.walkDir(fd, ""); err != nil {
		return nil, err
	}
	for _, names := range t.inodes {
		sort.Strings(names)
		for _, n := range names {
			t.entries[n].links = names
		}
	}
	return t, nil
}

func (t *tree) path(rel string) string {
	if rel == "" {
		return t.root
	}
	return t.root + "/" + rel
}

func (t *tree) walkDir(dirfd int, rel string) error {
	names, err := readNames(dirfd, t.path(rel))
	if err != nil {
		return err
	}
	for _, name := range names {
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		e := &entry{}
		if err := unix.Fstatat(dirfd, name, &e.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "stat", Path: t.path(crel), Err: err}
		}
		if e.xattrs, err = xattrsAt(dirfd, name, t.path(crel)); err != nil {
			return err
		}
		t.entries[crel] = e
		switch e.st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			fd, err := openDir(dirfd, name, false)
			if err != nil {
				return &os.PathError{Op: "open", Path: t.path(crel), Err: err}
			}
			err = t.walkDir(fd, crel)
			unix.Close(fd)
			if err != nil {
				return err
			}
			continue
		case unix.S_IFLNK:
			if e.target, err = readlinkAt(dirfd, name); err != nil {
				return &os.PathError{Op: "readlink", Path: t.path(crel), Err: err}
			}
			// readlink moves a symlink's atime and has no O_NOATIME: put
			// it back where the caller may (owner or CAP_FOWNER).
			ts := []unix.Timespec{e.st.Atim, {Nsec: unix.UTIME_OMIT}}
			_ = unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
		case unix.S_IFREG:
			if e.sum, err = hashAt(dirfd, name); err != nil {
				return &os.PathError{Op: "read", Path: t.path(crel), Err: err}
			}
		}
		k := inode{uint64(e.st.Dev), e.st.Ino}
		t.inodes[k] = append(t.inodes[k], crel)
	}
	return nil
}

// openAt opens with O_NOATIME when the kernel lets the caller (owner or
// CAP_FOWNER), so that reading does not move the times being compared.
func openAt(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_NOATIME|unix.O_CLOEXEC, 0)
		if err == unix.EPERM {
			fd, err = unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
		}
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

func openDir(dirfd int, name string, follow bool) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := openAt(dirfd, name, flags)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fd, nil
}

func readNames(dirfd int, path string) ([]string, error) {
	fd, err := openAt(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

func readlinkAt(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

func hashAt(dirfd int, name string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	fd, err := openAt(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		return sum, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// xattrsAt lists the extended attributes of name in dirfd, without following
// a symlink. The l*xattr calls take a path, so the entry is named through
// the directory's descriptor in /proc: short, whatever the depth, and never
// resolved through a symlink of the tree.
func xattrsAt(dirfd int, name, display string) (map[string]string, error) {
	p := "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + name
	buf := make([]byte, 4096)
	var n int
	var err error
	for {
		n, err = unix.Llistxattr(p, buf)
		if err == unix.ERANGE {
			buf = make([]byte, len(buf)*4)
			continue
		}
		break
	}
	switch {
	case err == unix.ENOTSUP || err == unix.EOPNOTSUPP:
		return nil, nil
	case err == unix.ENOENT && !procMounted():
		return nil, errors.New("treecmp: /proc is not mounted; it is needed to read extended attributes relative to a directory")
	case err != nil:
		return nil, &os.PathError{Op: "listxattr", Path: display, Err: err}
	}
	out := map[string]string{}
	for _, k := range bytes.Split(bytes.TrimRight(buf[:n], "\x00"), []byte{0}) {
		if len(k) == 0 {
			continue
		}
		v := make([]byte, 256)
		for {
			m, err := unix.Lgetxattr(p, string(k), v)
			if err == unix.ERANGE {
				v = make([]byte, len(v)*4)
				continue
			}
			if err == unix.ENODATA {
				break // removed since the listing
			}
			if err != nil {
				return nil, &os.PathError{Op: "getxattr " + string(k), Path: display, Err: err}
			}
			out[string(k)] = string(v[:m])
			break
		}
	}
	return out, nil
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
}

func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "file"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFLNK:
		return "symlink"
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR:
		return "char device"
	case unix.S_IFBLK:
		return "block device"
	}
	return fmt.Sprintf("type %o", mode&unix.S_IFMT)
}

func modeString(mode uint32) string {
	return fmt.Sprintf("%04o", mode&07777)
}

func nsString(ns int64) string {
	sec, nsec := ns/1e9, ns%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return fmt.Sprintf("%d.%09d", sec, nsec)
}

func equalXattrs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func xattrString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	b.WriteByte('}')
	return b.String()
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "[" + strings.Join(q, " ") + "]"
}
