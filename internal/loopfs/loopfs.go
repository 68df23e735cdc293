// Package loopfs gives tests real filesystems of a chosen type: an image
// file made with truncate, formatted with mkfs, attached to a loop device and
// mounted (with the mount options it names) in a temporary directory, or a
// tmpfs of a set size; or, with MountFUSE, an image mounted through a FUSE
// driver (exfat-fuse, ntfs-3g, fusefat). Cleanup unmounts and detaches.
//
// It needs Linux, root, losetup, mount and the mkfs of the type. Where any is
// missing the test is skipped with the reason, so a run elsewhere says what
// it left out; with FASTCOPY_REQUIRE_LOOPFS=1 in the environment (a CI
// machine that must run them) the test fails instead.
package loopfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// RequireEnv names the variable that turns a skip into a failure.
const RequireEnv = "FASTCOPY_REQUIRE_LOOPFS"

// Config describes a filesystem to make.
type Config struct {
	Type string // "xfs", "btrfs", "ext4", ...: mkfs.Type formats it
	Size int64  // image size in bytes (xfs needs 300 MiB, btrfs 114 MiB)
	// Mkfs are extra mkfs arguments, e.g. "-m", "reflink=1" for xfs.
	Mkfs []string
	// Options are mount options, e.g. "compress=zstd" for btrfs.
	Options []string
	// DirectIO attaches the loop device with --direct-io=on, so that its
	// reads and writes go to the disk under the image instead of through
	// the page cache of the image file.
	DirectIO bool
}

// FS is a mounted filesystem.
type FS struct {
	Type  string
	Dir   string // the mount point
	Dev   string // the loop device, "" for tmpfs
	Image string // the image file, "" for tmpfs
}

// Mount makes, attaches and mounts the filesystem c describes, in temporary
// directories of the test. The test's cleanup unmounts it and detaches the
// loop device.
func Mount(t testing.TB, c Config) *FS {
	t.Helper()
	if err := Available(c.Type); err != nil {
		skip(t, err.Error())
	}
	img := filepath.Join(t.TempDir(), c.Type+".img")
	mnt := t.TempDir()
	fs, err := Attach(c, img, mnt)
	if errors.Is(err, errNoLoop) {
		skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the two TempDirs, so it runs before they are removed.
	t.Cleanup(func() {
		if err := fs.Detach(); err != nil {
			t.Error(err)
		}
	})
	return fs
}

var errNoLoop = errors.New("losetup could not attach a loop device")

// Attach makes the image img for c, attaches it and mounts it on the
// existing directory mnt. It is Mount for use outside a test (a TestMain);
// Detach undoes it.
func Attach(c Config, img, mnt string) (*FS, error) {
	if err := Available(c.Type); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(img, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(c.Size)
	f.Close()
	if err != nil {
		return nil, err
	}
	args := append(mkfsDefaults(c.Type), c.Mkfs...)
	if out, err := command("mkfs."+c.Type, append(args, img)...); err != nil {
		return nil, fmt.Errorf("mkfs.%s %s: %v\n%s", c.Type, strings.Join(args, " "), err, out)
	}
	largs := []string{"--find", "--show"}
	if c.DirectIO {
		largs = append(largs, "--direct-io=on")
	}
	out, err := command("losetup", append(largs, img)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %s", errNoLoop, err, out)
	}
	fs := &FS{Type: c.Type, Dir: mnt, Dev: strings.TrimSpace(out), Image: img}
	tool, margs := "mount", []string{"-t", c.Type}
	if len(c.Options) > 0 {
		margs = append(margs, "-o", strings.Join(c.Options, ","))
	}
	if out, err := command(tool, append(margs, fs.Dev, mnt)...); err != nil {
		_, _ = command("losetup", "-d", fs.Dev)
		return nil, fmt.Errorf("mount %s on %s: %v\n%s", fs.Dev, mnt, err, out)
	}
	return fs, nil
}

// Detach unmounts the filesystem and detaches its loop device.
func (fs *FS) Detach() error {
	if err := fs.unmount(); err != nil {
		return err
	}
	if fs.Dev == "" {
		return nil
	}
	if out, err := command("losetup", "-d", fs.Dev); err != nil {
		return fmt.Errorf("losetup -d %s: %v\n%s", fs.Dev, err, out)
	}
	return nil
}

// Tmpfs mounts a tmpfs of size bytes in a temporary directory.
func Tmpfs(t testing.TB, size int64) *FS {
	t.Helper()
	if err := need("mount", "umount"); err != nil {
		skip(t, err.Error())
	}
	mnt := t.TempDir()
	if out, err := command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", mnt); err != nil {
		skip(t, fmt.Sprintf("cannot mount a tmpfs: %v: %s", err, out))
	}
	fs := &FS{Type: "tmpfs", Dir: mnt}
	t.Cleanup(func() {
		if err := fs.unmount(); err != nil {
			t.Error(err)
		}
	})
	return fs
}

// DirectIO reports whether the loop device bypasses the page cache of its
// image file (losetup may fall back to buffered I/O without failing).
func (fs *FS) DirectIO() bool {
	if fs.Dev == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(fs.Dev), "loop", "dio"))
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// Path joins elem to the mount point.
func (fs *FS) Path(elem ...string) string {
	return filepath.Join(append([]string{fs.Dir}, elem...)...)
}

func (fs *FS) unmount() error {
	var out string
	var err error
	// A file a failed test left open keeps the mount busy for a moment.
	for i := 0; i < 20; i++ {
		if out, err = command("umount", fs.Dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, _ = command("umount", "--lazy", fs.Dir)
	return fmt.Errorf("umount %s: %v\n%s", fs.Dir, err, out)
}

// mkfsDefaults are the mkfs arguments a type needs to format an image.
func mkfsDefaults(typ string) []string {
	switch typ {
	case "xfs", "btrfs":
		return []string{"-q", "-f"}
	case "ext2", "ext3", "ext4":
		// No blocks reserved for root: the tests run as root and want
		// "full" to mean full.
		return []string{"-q", "-F", "-m", "0"}
	}
	return nil
}

// Available reports why a filesystem of type fstype cannot be loop-mounted
// here, or nil when it can.
func Available(fstype string) error {
	if err := need("mkfs."+fstype, "losetup", "mount", "umount"); err != nil {
		return err
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return errors.New("no /dev/loop-control: this kernel or container offers no loop devices")
	}
	return nil
}

// need reports why this process cannot mount filesystems with tools.
func need(tools ...string) error {
	if runtime.GOOS != "linux" {
		return errors.New("loop-mounted filesystems are a Linux feature")
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root to attach loop devices and mount filesystems")
	}
	for _, tool := range tools {
		if _, err := lookPath(tool); err != nil {
			return fmt.Errorf("%s not found (Debian: apt-get install %s)", tool, pkgOf(tool))
		}
	}
	return nil
}

func skip(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s (and %s is set)", reason, RequireEnv)
	}
	t.Skipf("skipping: %s", reason)
}

func pkgOf(tool string) string {
	switch tool {
	case "mkfs.xfs", "xfs_io":
		return "xfsprogs"
	case "mkfs.btrfs":
		return "btrfs-progs"
	case "mkfs.ext2", "mkfs.ext3", "mkfs.ext4":
		return "e2fsprogs"
	case "mkfs.exfat":
		return "exfatprogs"
	case "mount.exfat-fuse":
		return "exfat-fuse"
	case "mkfs.vfat", "mkfs.fat":
		return "dosfstools"
	case "mkfs.ntfs", "mkntfs", "ntfs-3g":
		return "ntfs-3g"
	case "fusefat":
		return "fusefat"
	}
	return "mount"
}

// lookPath finds tool in PATH or in the sbin directories a non-login root
// shell may leave out.
func lookPath(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, tool)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func command(tool string, args ...string) (string, error) {
	p, err := lookPath(tool)
	if err != nil {
		return "", err
	}
	out, err := exec.Command(p, args...).CombinedOutput()
	return string(out), err
}
