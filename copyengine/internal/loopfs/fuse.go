package loopfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FUSE describes a filesystem image formatted by a mkfs tool and mounted
// through a FUSE driver on a loop device: exFAT through exfat-fuse, NTFS
// through ntfs-3g. This kernel may have no native driver for them, and a
// removable drive on such a machine looks exactly like this.
type FUSE struct {
	Type string   // a name for messages and FS.Type: "exfat", "ntfs"
	Size int64    // image size in bytes
	Mkfs []string // the formatting command, the image appended: "mkfs.exfat"
	// Mount is the driver's mount command, "-o" Options (when any), the
	// device and the mount point appended: "mount.exfat-fuse", "ntfs-3g".
	Mount   []string
	Options []string
}

// ExFAT is an exFAT image mounted through exfat-fuse.
func ExFAT(size int64) FUSE {
	return FUSE{Type: "exfat", Size: size, Mkfs: []string{"mkfs.exfat"}, Mount: []string{"mount.exfat-fuse"}}
}

// NTFS is an NTFS image mounted through ntfs-3g with the mount options opts
// ("windows_names", say).
func NTFS(size int64, opts ...string) FUSE {
	return FUSE{Type: "ntfs", Size: size, Mkfs: []string{"mkntfs", "-F", "-Q"}, Mount: []string{"ntfs-3g"}, Options: opts}
}

// MountFUSE formats, attaches and mounts c in temporary directories of the
// test, or skips it saying what is missing. The cleanup unmounts it (a FUSE
// daemon may hold the mount for a moment after the last file is closed) and
// detaches the loop device.
func MountFUSE(t testing.TB, c FUSE) *FS {
	t.Helper()
	if err := need(c.Mkfs[0], c.Mount[0], "losetup", "mount", "umount"); err != nil {
		skip(t, err.Error())
	}
	for _, dev := range []string{"/dev/fuse", "/dev/loop-control"} {
		if _, err := os.Stat(dev); err != nil {
			skip(t, "no "+dev+": this kernel or container cannot mount it")
		}
	}
	img := filepath.Join(t.TempDir(), c.Type+".img")
	mnt := t.TempDir()
	f, err := os.OpenFile(img, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(c.Size)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := command(c.Mkfs[0], append(c.Mkfs[1:], img)...); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(c.Mkfs, " "), err, out)
	}
	out, err := command("losetup", "--find", "--show", img)
	if err != nil {
		skip(t, fmt.Sprintf("%v: %v: %s", errNoLoop, err, out))
	}
	fs := &FS{Type: c.Type, Dir: mnt, Dev: strings.TrimSpace(out), Image: img}
	args := c.Mount[1:]
	if len(c.Options) > 0 {
		args = append(args, "-o", strings.Join(c.Options, ","))
	}
	if out, err := command(c.Mount[0], append(args, fs.Dev, mnt)...); err != nil {
		_, _ = command("losetup", "-d", fs.Dev)
		t.Fatalf("%s %s %s: %v\n%s", strings.Join(c.Mount, " "), fs.Dev, mnt, err, out)
	}
	t.Cleanup(func() {
		if err := fs.Detach(); err != nil {
			t.Error(err)
		}
	})
	return fs
}
