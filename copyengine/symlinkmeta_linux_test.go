//go:build linux

package copyengine_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestSymlinkMetaThroughDescriptor: a symlink's owner, times and
// extended attributes are set through a descriptor of the symlink itself,
// and land on it, not on the file it points to (which exists here, so a
// call that followed it would change that file instead).
func TestSymlinkMetaThroughDescriptor(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (another owner, and trusted.* attributes, which a symlink can carry)")
	}
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	target := filepath.Join(scr, "target")
	writeFile(t, target, []byte("pointed to"))
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	l := filepath.Join(src, "l")
	if err := os.Symlink(target, l); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lsetxattr(l, "trusted.fc", []byte("on the link"), 0); err != nil {
		t.Skipf("skipped: this filesystem keeps no trusted.* attribute on a symlink: %v", err)
	}
	if err := os.Lchown(l, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	ts := []unix.Timespec{{Sec: 1500000000, Nsec: 123456789}, {Sec: 1500000001, Nsec: 987654321}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, l, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatal(err)
	}
	var tBefore unix.Stat_t
	if err := unix.Stat(target, &tBefore); err != nil {
		t.Fatal(err)
	}
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst}); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dst, "l"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK || st.Uid != 65534 || st.Gid != 65534 || st.Mtim != ts[1] {
		t.Errorf("the copy: mode %o, owner %d:%d, mtime %v; want a symlink of 65534:65534 with mtime %v", st.Mode, st.Uid, st.Gid, st.Mtim, ts[1])
	}
	buf := make([]byte, 64)
	if n, err := unix.Lgetxattr(filepath.Join(dst, "l"), "trusted.fc", buf); err != nil || string(buf[:n]) != "on the link" {
		t.Errorf("the copy's trusted.fc: %q, %v", buf[:max(n, 0)], err)
	}
	var tAfter unix.Stat_t
	if err := unix.Stat(target, &tAfter); err != nil {
		t.Fatal(err)
	}
	if tAfter.Uid != tBefore.Uid || tAfter.Mtim != tBefore.Mtim || tAfter.Ctim != tBefore.Ctim {
		t.Errorf("the symlink's target was changed: owner %d -> %d, mtime %v -> %v", tBefore.Uid, tAfter.Uid, tBefore.Mtim, tAfter.Mtim)
	}
	if _, err := unix.Getxattr(target, "trusted.fc", buf); err == nil {
		t.Error("the symlink's target got its attribute")
	}
}
