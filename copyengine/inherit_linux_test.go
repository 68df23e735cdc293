package copyengine_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
)

// A copy is created with its final mode when the process's umask, the
// directory's default ACL and its setgid group cannot change what it gets;
// otherwise it is created 0600 and its owner and mode are set after. These
// tests put each of those in the way and check the copies still come out
// with the source's mode and group.

// defaultACL is the system.posix_acl_default value u::rwx,g::r-x,o::---
// (the kernel's posix_acl_xattr layout: version 2, then tag, permissions
// and id of each entry, sorted by tag).
func defaultACL() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range []struct{ tag, perm uint16 }{{0x01, 7}, {0x04, 5}, {0x20, 0}} {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, 0xffffffff)
	}
	return b
}

// modeTree writes files with the given modes under src and returns their
// names.
func modeTree(t *testing.T, src string, modes map[string]os.FileMode) {
	t.Helper()
	for name, m := range modes {
		p := filepath.Join(src, name)
		writeFile(t, p, []byte(name))
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
}

func checkModes(t *testing.T, dst string, modes map[string]os.FileMode) {
	t.Helper()
	for name, want := range modes {
		st, err := os.Lstat(filepath.Join(dst, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want the source's %o", name, got, want)
		}
	}
}

var plainModes = map[string]os.FileMode{"rw-r--r--": 0o644, "rwxr-xr-x": 0o755, "rw-rw-r--": 0o664, "rw-------": 0o600}

func TestModesUnderDefaultACL(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	modeTree(t, src, plainModes)
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(dst, "system.posix_acl_default", defaultACL(), 0); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			t.Skipf("skipped: the filesystem of %s has no POSIX ACLs: %v", dst, err)
		}
		t.Fatalf("setting a default ACL on %s: %v", dst, err)
	}
	// The ACL works: a file made here with 0644 gets 0640.
	probe := filepath.Join(dst, "probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(probe); st.Mode().Perm() != 0o640 {
		t.Fatalf("the default ACL did not take: a new file got %o, want 0640", st.Mode().Perm())
	}
	_ = os.Remove(probe)
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, NoSync: true}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkModes(t, dst, plainModes)
}

func TestModesUnderUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	syscall.Umask(0o022) // the source's modes as given
	modeTree(t, src, plainModes)
	syscall.Umask(0o077)
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, NoSync: true}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkModes(t, dst, plainModes)
}

func TestGroupInSetgidDirectory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipped: giving a directory a group the process is not in needs root")
	}
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	modeTree(t, src, plainModes)
	if err := os.Chown(filepath.Join(src, "rw-r--r--"), 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	const dirGid = 4242
	if err := os.Chown(dst, 0, dirGid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, 0o755|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, NoSync: true}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkModes(t, dst, plainModes)
	for name := range plainModes {
		st, err := os.Lstat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		if gid := st.Sys().(*syscall.Stat_t).Gid; gid != 0 {
			t.Errorf("%s: group %d (the setgid directory's), want the source's 0", name, gid)
		}
	}
}
