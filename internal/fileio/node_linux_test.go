//go:build linux

package fileio

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNodeActsOnObject: once a Node is open, its name is exchanged with a
// symlink to another file (as a writer of the directory could do). Every
// metadata call through the Node, including the /proc fallback of Chmod for
// kernels without fchmodat2, changes the object opened and leaves the
// symlink's target alone. A symlink itself is refused.
func TestNodeActsOnObject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("elsewhere"), 0o600); err != nil {
		t.Fatal(err)
	}
	var before syscall.Stat_t
	if err := syscall.Stat(other, &before); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "p"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(dir, "s")); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.OpenNode("s"); Errno(err) != unix.ELOOP {
		t.Fatalf("OpenNode of a symlink: %v, want ELOOP", err)
	}
	n, err := d.OpenNode("p")
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "p"), unix.AT_FDCWD, filepath.Join(dir, "s"), unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"chmod", func() error { return n.Chmod(0o644) }},
		{"chmod through /proc", func() error { return n.chmodProc(0o640) }},
		{"chown", func() error { return n.Chown(1, 1) }},
		{"utimes", func() error { return n.SetTimes(1e9, 2e9) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	var after syscall.Stat_t
	if err := syscall.Stat(other, &after); err != nil {
		t.Fatal(err)
	}
	if after.Mode != before.Mode || after.Uid != before.Uid || after.Mtim != before.Mtim || after.Ctim != before.Ctim {
		t.Errorf("the file behind the swapped-in symlink changed: mode %o -> %o, uid %d -> %d", before.Mode, after.Mode, before.Uid, after.Uid)
	}
	st, err := n.Restat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o7777 != 0o640 || st.Mtime != 2e9 || (os.Geteuid() == 0 && st.Uid != 1) {
		t.Errorf("the FIFO opened has mode %o, mtime %d, uid %d; want 0640, 2e9 and (as root) 1", st.Mode&0o7777, st.Mtime, st.Uid)
	}
}
