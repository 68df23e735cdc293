//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// exfatTools are the commands mountexfat runs, and the Debian packages
// that have them.
var exfatTools = map[string]string{
	"mkfs.exfat": "exfatprogs", "mount.exfat-fuse": "exfat-fuse",
	"losetup": "mount", "umount": "mount",
}

// sbinTool finds tool in PATH or in the sbin directories a non-login root
// shell may leave out.
func sbinTool(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(dir, tool)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// canMountExfat answers the condition [exfat]: whether mountexfat can
// work here. Where it cannot and FASTCOPY_REQUIRE_LOOPFS is set (a CI
// machine that must run such tests), it returns the reason as an error.
func canMountExfat() (bool, error) {
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "needs root to attach a loop device"
	default:
		for tool, pkg := range exfatTools {
			if _, err := sbinTool(tool); err != nil {
				why = fmt.Sprintf("%s not found (Debian: apt-get install %s)", tool, pkg)
			}
		}
		for _, dev := range []string{"/dev/fuse", "/dev/loop-control"} {
			if _, err := os.Stat(dev); err != nil {
				why = "no " + dev
			}
		}
	}
	if why == "" {
		return true, nil
	}
	if os.Getenv("FASTCOPY_REQUIRE_LOOPFS") != "" {
		return false, fmt.Errorf("cannot mount exFAT: %s (and FASTCOPY_REQUIRE_LOOPFS is set)", why)
	}
	return false, nil
}

// cmdMountExfat mounts a new 64 MiB exFAT image on the directory DIR
// (made if missing) through exfat-fuse, as a USB stick is mounted where
// the kernel has no exfat module, and unmounts it when the script ends.
// Guard it with [exfat].
func cmdMountExfat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mountexfat DIR")
	}
	run := func(tool string, args ...string) (string, error) {
		p, err := sbinTool(tool)
		if err != nil {
			return "", err
		}
		out, err := exec.Command(p, args...).CombinedOutput()
		return string(out), err
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	img := dir + ".img"
	f, err := os.Create(img)
	ts.Check(err)
	ts.Check(f.Truncate(64 << 20))
	ts.Check(f.Close())
	if out, err := run("mkfs.exfat", img); err != nil {
		ts.Fatalf("mkfs.exfat: %v\n%s", err, out)
	}
	out, err := run("losetup", "--find", "--show", img)
	if err != nil {
		ts.Fatalf("losetup could not attach a loop device: %v\n%s", err, out)
	}
	dev := strings.TrimSpace(out)
	if out, err := run("mount.exfat-fuse", dev, dir); err != nil {
		_, _ = run("losetup", "-d", dev)
		ts.Fatalf("mount.exfat-fuse: %v\n%s", err, out)
	}
	ts.Defer(func() {
		var err error
		for i := 0; i < 40; i++ { // the daemon may hold the mount a moment
			if _, err = run("umount", dir); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			_, _ = run("umount", "--lazy", dir)
		}
		_, _ = run("losetup", "-d", dev)
	})
}
