//go:build linux

package treecmp

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A checker that cannot fail proves nothing: each case below builds two
// trees that are identical but for one property, and expects Compare to
// report that property, on that entry, and nothing else.

// buildTree makes the fixture tree at dir. mutate, when set, changes it
// before the times are set, so that a change of structure does not show up
// as a change of a directory's mtime.
func buildTree(t *testing.T, dir string, mutate func(dir string)) {
	t.Helper()
	must(t, os.Mkdir(dir, 0o755))
	write(t, dir+"/f", "hello", 0o644)
	write(t, dir+"/g", "hello", 0o644)
	must(t, os.Mkdir(dir+"/d", 0o755))
	write(t, dir+"/d/h", "x", 0o600)
	must(t, os.Symlink("../f", dir+"/d/link"))
	write(t, dir+"/linked1", "linked", 0o644)
	must(t, os.Link(dir+"/linked1", dir+"/linked2"))
	must(t, unix.Mkfifo(dir+"/fifo", 0o640))
	sparse(t, dir+"/sparse", 1<<20, 512<<10)
	if os.Geteuid() == 0 {
		must(t, unix.Mknod(dir+"/cdev", unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
	}
	if err := unix.Setxattr(dir+"/f", "user.k", []byte("v"), 0); err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			t.Skipf("the filesystem of %s has no user extended attributes", dir)
		}
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(dir)
	}
	setTimes(t, dir)
}

// setTimes gives every entry of dir times derived from its path, deepest
// first, so that two trees built alike get equal times.
func setTimes(t *testing.T, dir string) {
	t.Helper()
	var paths []string
	must(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		paths = append(paths, p)
		return err
	}))
	for i := len(paths) - 1; i >= 0; i-- {
		rel, _ := filepath.Rel(dir, paths[i])
		h := fnv.New32a()
		h.Write([]byte(rel))
		m := 1_600_000_000*int64(1e9) + int64(h.Sum32())
		lutimes(t, paths[i], m+3_600_000_000_000, m)
	}
}

func write(t *testing.T, p, data string, perm os.FileMode) {
	t.Helper()
	must(t, os.WriteFile(p, []byte(data), perm))
	must(t, os.Chmod(p, perm))
}

// sparse makes a file of size bytes with one 4 KiB run of data at off.
func sparse(t *testing.T, p string, size, off int64) {
	t.Helper()
	f, err := os.Create(p)
	must(t, err)
	defer f.Close()
	must(t, f.Truncate(size))
	_, err = f.WriteAt([]byte(strings.Repeat("d", 4096)), off)
	must(t, err)
}

func lutimes(t *testing.T, p string, atime, mtime int64) {
	t.Helper()
	ts := []unix.Timespec{unix.NsecToTimespec(atime), unix.NsecToTimespec(mtime)}
	must(t, unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW))
}

func statNs(t *testing.T, p string) (atime, mtime int64) {
	t.Helper()
	var st unix.Stat_t
	must(t, unix.Lstat(p, &st))
	return unix.TimespecToNsec(st.Atim), unix.TimespecToNsec(st.Mtim)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: this property can only be set up by root")
	}
}

func TestIdenticalTreesHaveNoDiffs(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	a, b := base+"/a", base+"/b"
	buildTree(t, a, nil)
	buildTree(t, b, nil)
	diffs, err := Compare(a, b, Options{Atime: true})
	must(t, err)
	if len(diffs) != 0 {
		t.Fatalf("identical trees compare different:\n%s", strings.Join(diffs, "\n"))
	}
	// Comparing reads every file and lists every directory; with
	// O_NOATIME that must not have moved a single access time.
	diffs, err = Compare(a, b, Options{Atime: true})
	must(t, err)
	if len(diffs) != 0 {
		t.Fatalf("a second comparison found differences (did the first move atimes?):\n%s", strings.Join(diffs, "\n"))
	}
}

func TestDetectsEachDifference(t *testing.T) {
	t.Parallel()
	type tc struct {
		name   string
		root   bool                            // the change needs root
		before func(t *testing.T, b string)    // changes b before times are set
		after  func(t *testing.T, b string)    // changes b after times are set
		opts   Options                         // for Compare
		paths  []string                        // the entries the diffs must name (and only those)
		want   string                          // in one of the diffs; "" expects no diffs at all
		check  func(t *testing.T, a, b string) // extra preconditions, may skip
	}
	cases := []tc{
		{name: "missing entry", before: func(t *testing.T, b string) { must(t, os.Remove(b+"/g")) }, paths: []string{"g"}, want: "only in"},
		{name: "extra entry", before: func(t *testing.T, b string) { write(t, b+"/extra", "", 0o644) }, paths: []string{"extra"}, want: "only in"},
		{name: "file became directory", before: func(t *testing.T, b string) { must(t, os.Remove(b+"/g")); must(t, os.Mkdir(b+"/g", 0o755)) }, paths: []string{"g"}, want: "type file vs directory"},
		{name: "fifo became file", before: func(t *testing.T, b string) { must(t, os.Remove(b+"/fifo")); write(t, b+"/fifo", "", 0o640) }, paths: []string{"fifo"}, want: "type fifo vs file"},
		{name: "content, same size", before: func(t *testing.T, b string) { write(t, b+"/g", "hellO", 0o644) }, paths: []string{"g"}, want: "content differs"},
		{name: "size", before: func(t *testing.T, b string) { write(t, b+"/g", "hello!", 0o644) }, paths: []string{"g"}, want: "size 5 vs 6"},
		{name: "permission bits", before: func(t *testing.T, b string) { must(t, os.Chmod(b+"/f", 0o600)) }, paths: []string{"f"}, want: "mode 0644 vs 0600"},
		{name: "setuid", before: func(t *testing.T, b string) { must(t, unix.Chmod(b+"/f", 0o4644)) }, paths: []string{"f"}, want: "mode 0644 vs 4644"},
		{name: "setgid", before: func(t *testing.T, b string) { must(t, unix.Chmod(b+"/f", 0o2644)) }, paths: []string{"f"}, want: "mode 0644 vs 2644"},
		{name: "sticky", before: func(t *testing.T, b string) { must(t, unix.Chmod(b+"/d", 0o1755)) }, paths: []string{"d"}, want: "mode 0755 vs 1755"},
		{name: "root directory mode", before: func(t *testing.T, b string) { must(t, unix.Chmod(b, 0o700)) }, paths: []string{""}, want: "mode 0755 vs 0700"},
		{name: "file mtime by 1ns", after: func(t *testing.T, b string) { bump(t, b+"/f", 0, 1) }, paths: []string{"f"}, want: "mtime"},
		{name: "directory mtime by 1ns", after: func(t *testing.T, b string) { bump(t, b+"/d", 0, 1) }, paths: []string{"d"}, want: "mtime"},
		{name: "symlink mtime by 1ns", after: func(t *testing.T, b string) { bump(t, b+"/d/link", 0, 1) }, paths: []string{"d/link"}, want: "mtime"},
		{name: "atime by 1ns, compared", after: func(t *testing.T, b string) { bump(t, b+"/f", 1, 0) }, opts: Options{Atime: true}, paths: []string{"f"}, want: "atime"},
		{name: "directory atime by 1ns, compared", after: func(t *testing.T, b string) { bump(t, b+"/d", 1, 0) }, opts: Options{Atime: true}, paths: []string{"d"}, want: "atime"},
		{name: "atime by 1ns, not compared", after: func(t *testing.T, b string) { bump(t, b+"/f", 1, 0) }, want: ""},
		{name: "owner", root: true, before: func(t *testing.T, b string) { must(t, os.Lchown(b+"/f", 1234, -1)) }, paths: []string{"f"}, want: "owner uid 0 vs 1234"},
		{name: "group", root: true, before: func(t *testing.T, b string) { must(t, os.Lchown(b+"/f", -1, 5678)) }, paths: []string{"f"}, want: "group gid 0 vs 5678"},
		{name: "symlink owner", root: true, before: func(t *testing.T, b string) { must(t, os.Lchown(b+"/d/link", 1234, 5678)) }, paths: []string{"d/link"}, want: "owner uid"},
		{name: "symlink target", before: func(t *testing.T, b string) {
			must(t, os.Remove(b+"/d/link"))
			must(t, os.Symlink("../g", b+"/d/link"))
		}, paths: []string{"d/link"}, want: `symlink target "../f" vs "../g"`},
		{name: "xattr value", before: func(t *testing.T, b string) { must(t, unix.Setxattr(b+"/f", "user.k", []byte("w"), 0)) }, paths: []string{"f"}, want: "xattrs"},
		{name: "xattr missing", before: func(t *testing.T, b string) { must(t, unix.Removexattr(b+"/f", "user.k")) }, paths: []string{"f"}, want: "xattrs"},
		{name: "xattr on a directory", before: func(t *testing.T, b string) { must(t, unix.Setxattr(b+"/d", "user.k", []byte("v"), 0)) }, paths: []string{"d"}, want: "xattrs"},
		{name: "xattr on a symlink", root: true, before: func(t *testing.T, b string) { must(t, unix.Lsetxattr(b+"/d/link", "trusted.k", []byte("v"), 0)) }, paths: []string{"d/link"}, want: "xattrs"},
		{name: "xattr on a fifo", root: true, before: func(t *testing.T, b string) { must(t, unix.Setxattr(b+"/fifo", "trusted.k", []byte("v"), 0)) }, paths: []string{"fifo"}, want: "xattrs"},
		{
			name: "hard link broken",
			before: func(t *testing.T, b string) {
				must(t, os.Remove(b+"/linked2"))
				write(t, b+"/linked2", "linked", 0o644)
			},
			paths: []string{"linked1", "linked2"}, want: "hard links",
		},
		{
			name: "hard link added",
			before: func(t *testing.T, b string) {
				must(t, os.Remove(b+"/g"))
				must(t, os.Link(b+"/f", b+"/g"))
			},
			paths: []string{"f", "g"}, want: "hard links",
		},
		{
			name: "holes filled in",
			before: func(t *testing.T, b string) {
				f, err := os.OpenFile(b+"/sparse", os.O_WRONLY, 0)
				must(t, err)
				defer f.Close()
				buf := make([]byte, 1<<20)
				copy(buf[512<<10:], strings.Repeat("d", 4096))
				_, err = f.WriteAt(buf, 0)
				must(t, err)
			},
			check: func(t *testing.T, a, b string) {
				var st unix.Stat_t
				must(t, unix.Stat(a+"/sparse", &st))
				if st.Blocks*512 >= st.Size {
					t.Skipf("the filesystem of %s does not keep holes", a)
				}
			},
			paths: []string{"sparse"}, want: "allocates",
		},
		{
			name: "device number", root: true,
			before: func(t *testing.T, b string) {
				must(t, os.Remove(b+"/cdev"))
				must(t, unix.Mknod(b+"/cdev", unix.S_IFCHR|0o600, int(unix.Mkdev(1, 5))))
			},
			paths: []string{"cdev"}, want: "device 1:3 vs 1:5",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root {
				needRoot(t)
			}
			base := t.TempDir()
			a, b := base+"/a", base+"/b"
			buildTree(t, a, nil)
			var before func(string)
			if c.before != nil {
				before = func(b string) { c.before(t, b) }
			}
			buildTree(t, b, before)
			if c.after != nil {
				c.after(t, b)
			}
			if c.check != nil {
				c.check(t, a, b)
			}
			diffs, err := Compare(a, b, c.opts)
			must(t, err)
			if c.want == "" {
				if len(diffs) != 0 {
					t.Fatalf("want no differences, got:\n%s", strings.Join(diffs, "\n"))
				}
				return
			}
			found := false
			for _, d := range diffs {
				named := false
				for _, p := range c.paths {
					named = named || strings.HasPrefix(d, fmt.Sprintf("%q: ", p))
				}
				if !named {
					t.Errorf("a difference names an entry that was not changed: %s", d)
				}
				found = found || strings.Contains(d, c.want)
			}
			if !found {
				t.Errorf("no difference says %q; got:\n%s", c.want, strings.Join(diffs, "\n"))
			}
		})
	}
}

// bump moves the atime and mtime of p by the given nanoseconds.
func bump(t *testing.T, p string, da, dm int64) {
	t.Helper()
	at, mt := statNs(t, p)
	lutimes(t, p, at+da, mt+dm)
}

// TestDeepPaths compares trees whose paths are longer than PATH_MAX, which
// no path-based call can reach, and finds a difference at the bottom.
func TestDeepPaths(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	name := strings.Repeat("n", 250)
	build := func(root, content string) {
		must(t, os.Mkdir(root, 0o755))
		fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		must(t, err)
		var fds []int
		for i := 0; i < 20; i++ { // 20 * 251 bytes > 4096
			must(t, unix.Mkdirat(fd, name, 0o755))
			next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
			must(t, err)
			fds = append(fds, fd)
			fd = next
		}
		f, err := unix.Openat(fd, "bottom", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644)
		must(t, err)
		_, err = unix.Write(f, []byte(content))
		must(t, err)
		unix.Close(f)
		ts := []unix.Timespec{unix.NsecToTimespec(1e18 + 7), unix.NsecToTimespec(1e18 + 9)}
		must(t, unix.UtimesNanoAt(fd, "bottom", ts, unix.AT_SYMLINK_NOFOLLOW))
		for i := len(fds) - 1; i >= 0; i-- {
			must(t, unix.UtimesNanoAt(fds[i], name, ts, unix.AT_SYMLINK_NOFOLLOW))
			unix.Close(fd)
			fd = fds[i]
		}
		unix.Close(fd)
		lutimes(t, root, 1e18+7, 1e18+9)
	}
	a, b := base+"/a", base+"/b"
	build(a, "same")
	build(b, "same")
	diffs, err := Compare(a, b, Options{Atime: true})
	must(t, err)
	if len(diffs) != 0 {
		t.Fatalf("identical deep trees compare different:\n%s", strings.Join(diffs, "\n"))
	}
	c := base + "/c"
	build(c, "diff")
	diffs, err = Compare(a, c, Options{})
	must(t, err)
	if len(diffs) != 1 || !strings.Contains(diffs[0], "bottom") || !strings.Contains(diffs[0], "content differs") {
		t.Fatalf("want one content difference at the bottom, got:\n%s", strings.Join(diffs, "\n"))
	}
	if p := strings.SplitN(diffs[0], `": `, 2)[0]; len(p) <= 4096 {
		t.Fatalf("the path named is %d bytes, not beyond PATH_MAX", len(p))
	}
}
