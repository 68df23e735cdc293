package loopfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The FUSE drivers MountFUSE knows: what a removable drive formatted by a
// camera or by Windows looks like to a kernel without the native driver
// (this one has no exfat, vfat or ntfs3 module).
const (
	ExfatFUSE = "exfat"   // exfatprogs + exfat-fuse
	NTFS3G    = "ntfs"    // ntfs-3g (mkntfs)
	LowNTFS3G = "lowntfs" // ntfs-3g's lowntfs-3g, which can fold case (ignore_case)
	FuseFAT   = "vfat"    // dosfstools + fusefat, FAT32
)

// FUSEConfig describes a FUSE filesystem to make.
type FUSEConfig struct {
	Type    string   // ExfatFUSE, NTFS3G, LowNTFS3G or FuseFAT
	Size    int64    // image size in bytes
	Options []string // extra mount options, e.g. "windows_names" for ntfs-3g
}

// FUSEFS is a filesystem on a loop device mounted through its FUSE driver,
// a process of its own that the test can kill (Kill) and start again
// (Remount).
type FUSEFS struct {
	FS
	c FUSEConfig
	t testing.TB
}

type fuseTool struct{ mkfs, mkfsPkg, driver, driverPkg string }

func fuseTools(typ string) (fuseTool, error) {
	switch typ {
	case ExfatFUSE:
		return fuseTool{"mkfs.exfat", "exfatprogs", "mount.exfat-fuse", "exfat-fuse"}, nil
	case NTFS3G:
		return fuseTool{"mkntfs", "ntfs-3g", "ntfs-3g", "ntfs-3g"}, nil
	case LowNTFS3G:
		return fuseTool{"mkntfs", "ntfs-3g", "lowntfs-3g", "ntfs-3g"}, nil
	case FuseFAT:
		return fuseTool{"mkfs.vfat", "dosfstools", "fusefat", "fusefat"}, nil
	}
	return fuseTool{}, fmt.Errorf("loopfs: no FUSE driver known for %q", typ)
}

// MountFUSE makes an image for c, attaches it to a loop device and mounts
// it with its FUSE driver in temporary directories of the test, or skips the
// test saying what is missing. The cleanup unmounts (also after Kill) and
// detaches.
func MountFUSE(t testing.TB, c FUSEConfig) *FUSEFS {
	t.Helper()
	tool, err := fuseTools(c.Type)
	if err != nil {
		t.Fatal(err)
	}
	if err := need("losetup", "umount"); err != nil {
		skip(t, err.Error())
	}
	for _, x := range [][2]string{{tool.mkfs, tool.mkfsPkg}, {tool.driver, tool.driverPkg}} {
		if _, err := lookPath(x[0]); err != nil {
			skip(t, fmt.Sprintf("%s not found (Debian: apt-get install %s)", x[0], x[1]))
		}
	}
	for _, dev := range []string{"/dev/fuse", "/dev/loop-control"} {
		if _, err := os.Stat(dev); err != nil {
			skip(t, fmt.Sprintf("no %s: this kernel or container cannot do it", dev))
		}
	}
	img := filepath.Join(t.TempDir(), c.Type+".img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(c.Size)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	switch c.Type {
	case NTFS3G, LowNTFS3G:
		args = []string{"-F", "-Q", "-q"}
	case FuseFAT:
		args = []string{"-F", "32"}
	}
	if out, err := command(tool.mkfs, append(args, img)...); err != nil {
		t.Fatalf("%s: %v\n%s", tool.mkfs, err, out)
	}
	out, err := command("losetup", "--find", "--show", img)
	if err != nil {
		skip(t, fmt.Sprintf("%v: %v: %s", errNoLoop, err, out))
	}
	fs := &FUSEFS{FS: FS{Type: c.Type, Dir: t.TempDir(), Dev: strings.TrimSpace(out), Image: img}, c: c, t: t}
	t.Cleanup(func() {
		fs.Unmount()
		if out, err := command("losetup", "-d", fs.Dev); err != nil {
			t.Errorf("losetup -d %s: %v\n%s", fs.Dev, err, out)
		}
	})
	fs.Mount()
	return fs
}

// Mount starts the driver on the mount point and waits until the mount is
// there.
func (fs *FUSEFS) Mount() {
	fs.t.Helper()
	tool, _ := fuseTools(fs.c.Type)
	opts := fs.c.Options
	if fs.c.Type == FuseFAT {
		opts = append([]string{"rw+"}, opts...) // fusefat mounts read-only without it
	}
	var args []string
	if len(opts) > 0 {
		args = []string{"-o", strings.Join(opts, ",")}
	}
	args = append(args, fs.Dev, fs.Dir)
	if out, err := command(tool.driver, args...); err != nil {
		fs.t.Fatalf("%s %s: %v\n%s", tool.driver, strings.Join(args, " "), err, out)
	}
	for i := 0; ; i++ {
		if mounted(fs.Dir) {
			return
		}
		if i == 100 {
			fs.t.Fatalf("%s: %s did not appear as a mount point", tool.driver, fs.Dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Unmount unmounts if mounted (a FUSE driver may keep the mount busy for a
// moment after the last file is closed; one that was killed leaves a mount
// that only a lazy unmount removes).
func (fs *FUSEFS) Unmount() {
	fs.t.Helper()
	var out string
	var err error
	for i := 0; i < 40; i++ {
		if !mounted(fs.Dir) {
			return
		}
		if out, err = command("umount", fs.Dir); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, lerr := command("umount", "--lazy", fs.Dir); lerr != nil {
		fs.t.Errorf("umount %s: %v\n%s", fs.Dir, err, out)
	}
}

// Remount unmounts and mounts again: the driver starts afresh and reads
// everything from the image.
func (fs *FUSEFS) Remount() {
	fs.t.Helper()
	fs.Unmount()
	fs.Mount()
}

// DriverPID is the process id of the driver serving the mount, found by its
// command line (which names the mount point).
func (fs *FUSEFS) DriverPID() (int, error) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 1 && args[len(args)-1] == fs.Dir && args[len(args)-2] == fs.Dev {
			return pid, nil
		}
	}
	return 0, errors.New("loopfs: no driver process found for " + fs.Dir)
}

// Kill kills the driver with SIGKILL, as a crashed driver dies: the mount
// stays, and every call on it fails with ENOTCONN until it is unmounted.
func (fs *FUSEFS) Kill() error {
	pid, err := fs.DriverPID()
	if err != nil {
		return err
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if err := proc.Kill(); err != nil { // SIGKILL
		return err
	}
	// The signal is delivered asynchronously: wait until the driver has
	// exited (gone, or a zombie whose descriptors, /dev/fuse among them,
	// are closed), so that the mount fails from the moment Kill returns.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil
		}
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && len(b) > i+2 && b[i+2] == 'Z' {
			return nil
		}
	}
	return fmt.Errorf("the driver %d of %q did not exit after SIGKILL", pid, fs.Dir)
}

// mounted reports whether dir is a mount point (listed in mountinfo).
func mounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMount(f[4]) == dir {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ExFAT is an exFAT image of size bytes mounted through exfat-fuse.
func ExFAT(size int64) FUSEConfig { return FUSEConfig{Type: ExfatFUSE, Size: size} }

// NTFS is an NTFS image of size bytes mounted through ntfs-3g with the
// mount options opts ("windows_names", say).
func NTFS(size int64, opts ...string) FUSEConfig {
	return FUSEConfig{Type: NTFS3G, Size: size, Options: opts}
}

// LowNTFS is an NTFS image of size bytes mounted through lowntfs-3g with
// the mount options opts ("ignore_case": names fold case, and are listed
// in lower case).
func LowNTFS(size int64, opts ...string) FUSEConfig {
	return FUSEConfig{Type: LowNTFS3G, Size: size, Options: opts}
}
