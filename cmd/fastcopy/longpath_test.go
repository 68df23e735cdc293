//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/treecmp"
)

// TestPathBeyondPathMax copies a tree whose deepest paths are longer than
// PATH_MAX (4096 bytes), which no single path-based system call can name.
// cp -a cannot copy it (it stats by full path and fails with ENAMETOOLONG),
// so this is not part of the oracle: the copy is held against the source.
func TestPathBeyondPathMax(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	t.Cleanup(func() {
		// Without root, the read-only directory at the bottom must be
		// made writable for the tree to be removed.
		for _, root := range []string{src, dst} {
			if _, err := os.Stat(root); err == nil {
				fd := openChain(t, root)
				_ = unix.Fchmodat(fd, "ro", 0o755, 0)
				unix.Close(fd)
			}
		}
	})
	buildDeepTree(t, src)

	r := &runner{t: t}
	r.mustRun("fastcopy", "-q", src, dst)
	diffs, err := treecmp.Compare(src, dst, treecmp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("the copy differs from the source:\n%s", strings.Join(diffs, "\n"))
	}

	// A leftover temporary at the bottom is removed by the next run, which
	// finds everything else up to date.
	bottom := openChain(t, dst)
	fd, err := unix.Openat(bottom, ".leaf.fastcopy-tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	unix.Close(bottom)
	// Recorded as the interrupted run would have: a name alone is no
	// run's leftover.
	parts := make([]string, 0, deepLevels+1)
	for i := 0; i < deepLevels; i++ {
		parts = append(parts, deepName(i))
	}
	parts = append(parts, ".leaf.fastcopy-tmp")
	record := "fastcopy-made 1\n+ f 0 " + strconv.Quote(strings.Join(parts, "/")) + "\n"
	if err := os.WriteFile(filepath.Join(dst, ".fastcopy-made"), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Copied, Failed, Skipped int64
		Temps                   int64 `json:"temps_removed"`
	}
	out := r.mustRun("fastcopy", "--json", src, dst)
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.Copied != 0 || rep.Failed != 0 || rep.Skipped == 0 || rep.Temps != 1 {
		t.Errorf("rerun: want nothing copied and one temporary removed, got %s", out)
	}
	// The planted temporary changed the bottom directory's mtime, and
	// removing it again; the rerun sets the source's back.
	if diffs, err = treecmp.Compare(src, dst, treecmp.Options{}); err != nil {
		t.Fatal(err)
	} else if len(diffs) > 0 {
		t.Fatalf("after the rerun the copy differs from the source:\n%s", strings.Join(diffs, "\n"))
	}
}

const deepLevels = 20 // 20 names of 250 bytes: 5020 bytes of path

func deepName(i int) string {
	return fmt.Sprintf("L%02d-", i) + strings.Repeat("d", 246)
}

// openChain opens the deepest directory of a tree made by buildDeepTree.
func openChain(t *testing.T, root string) int {
	t.Helper()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < deepLevels; i++ {
		next, err := unix.Openat(fd, deepName(i), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	return fd
}

// buildDeepTree makes root with a chain of directories below it, and at the
// bottom a file with an attribute, a symlink, a hard link to a file at the
// top, a FIFO and a read-only directory; times are set on everything,
// deepest first, through directory descriptors.
func buildDeepTree(t *testing.T, root string) {
	t.Helper()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("mkdir", os.Mkdir(root, 0o755))
	must("write", os.WriteFile(filepath.Join(root, "top"), []byte("linked from the bottom\n"), 0o644))
	top, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must("open", err)
	fds := []int{top}
	for i := 0; i < deepLevels; i++ {
		must("mkdirat", unix.Mkdirat(fds[i], deepName(i), 0o755))
		fd, err := unix.Openat(fds[i], deepName(i), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		must("openat", err)
		if i == deepLevels/2 {
			f, err := unix.Openat(fd, "midway", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
			must("create midway", err)
			_, err = unix.Write(f, []byte("halfway down\n"))
			must("write midway", err)
			unix.Close(f)
		}
		fds = append(fds, fd)
	}
	bottom := fds[len(fds)-1]
	f, err := unix.Openat(bottom, "leaf", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o640)
	must("create leaf", err)
	_, err = unix.Write(f, []byte(strings.Repeat("deep data\n", 1000)))
	must("write leaf", err)
	if err := unix.Fsetxattr(f, "user.deep", []byte("at the bottom"), 0); err != nil && err != unix.ENOTSUP {
		must("setxattr", err)
	}
	unix.Close(f)
	must("symlink", unix.Symlinkat("../../top-of-two", bottom, "up"))
	must("link", unix.Linkat(top, "top", bottom, "top-link", 0))
	must("mkfifo", unix.Mknodat(bottom, "fifo", unix.S_IFIFO|0o600, 0))
	must("mkdir ro", unix.Mkdirat(bottom, "ro", 0o755))
	ro, err := unix.Openat(bottom, "ro", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must("open ro", err)
	must("create in ro", unix.Mknodat(ro, "in-ro", unix.S_IFREG|0o444, 0))
	if err := unix.Fsetxattr(ro, "user.dir", []byte("deep directory"), 0); err != nil && err != unix.ENOTSUP {
		must("setxattr", err)
	}
	must("chmod ro", unix.Fchmod(ro, 0o555))
	unix.Close(ro)

	n := int64(0)
	touch := func(dirfd int, name string) {
		t.Helper()
		n++
		ts := []unix.Timespec{unix.NsecToTimespec(1_700_000_000*1e9 + n*1001), unix.NsecToTimespec(1_600_000_000*1e9 + n*7777)}
		must("utimes "+name, unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW))
	}
	for _, name := range []string{"leaf", "up", "fifo", "ro/in-ro", "ro"} {
		touch(bottom, name)
	}
	touch(fds[deepLevels/2+1], "midway")
	for i := deepLevels - 1; i >= 0; i-- {
		touch(fds[i], deepName(i))
		unix.Close(fds[i+1])
	}
	touch(top, "top")
	unix.Close(top)
	touch(unix.AT_FDCWD, root)
}

// TestPathBeyondPathMaxDereference copies the same deep tree with -L, with
// symlinks at the bottom to a file and to a directory: directories are
// opened through descriptors when symlinks are followed too, so every file
// is copied, with the followed links as what they point to.
func TestPathBeyondPathMaxDereference(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	t.Cleanup(func() {
		for _, root := range []string{src, dst} {
			if _, err := os.Stat(root); err == nil {
				fd := openChain(t, root)
				_ = unix.Fchmodat(fd, "ro", 0o755, 0)
				_ = unix.Fchmodat(fd, "linkdir", 0o755, 0)
				unix.Close(fd)
			}
		}
	})
	buildDeepTree(t, src)
	bottom := openChain(t, src)
	// "up" leads out of the tree to nothing, which -L cannot follow: it
	// leads to the file beside it instead, and "linkdir" to a directory.
	for _, err := range []error{
		unix.Unlinkat(bottom, "up", 0),
		unix.Symlinkat("leaf", bottom, "up"),
		unix.Symlinkat("ro", bottom, "linkdir"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	unix.Close(bottom)

	r := &runner{t: t}
	out := r.mustRun("fastcopy", "-L", "--json", src, dst)
	var rep struct{ Failed int64 }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.Failed != 0 {
		t.Errorf("want every file copied and none failed, got %s", out)
	}
	want := strings.Repeat("deep data\n", 1000)
	got := openChain(t, dst)
	defer unix.Close(got)
	for _, name := range []string{"leaf", "up"} {
		fd, err := unix.Openat(got, name, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
		if err != nil {
			t.Fatalf("%s at the bottom of the copy: %v", name, err)
		}
		buf := make([]byte, 2*len(want))
		n, _ := unix.Read(fd, buf)
		unix.Close(fd)
		if string(buf[:n]) != want {
			t.Errorf("%s at the bottom of the copy: %d bytes, not the leaf's %d", name, n, len(want))
		}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(got, "linkdir/in-ro", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Errorf("linkdir/in-ro at the bottom of the copy: %v (mode %o)", err, st.Mode)
	}
}
