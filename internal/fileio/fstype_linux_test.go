package fileio

import (
	"strings"
	"testing"
)

const mountinfo = `22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
25 22 0:22 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw
40 22 0:45 / /media/usb rw,nosuid,nodev,relatime shared:30 - fuseblk /dev/sdb1 rw,user_id=0,group_id=0,allow_other
41 22 0:46 / /home/alice/remote\040box rw,nosuid,nodev,relatime shared:31 - fuse.sshfs alice@box:/ rw,user_id=1000
42 22 0:47 / /media/cam rw,relatime shared:32 master:7 - fuse.exfat-fuse /dev/sdc1 rw
43 22 0:47 /DCIM /srv/photos rw,relatime shared:33 - fuse.exfat-fuse /dev/sdc1 rw
44 22 0:48 / /mnt/odd rw shared:34 - fuse odd rw
`

func TestMountType(t *testing.T) {
	t.Parallel()
	dev := func(maj, min uint64) uint64 { return maj<<8 | min&0xff | (min&^0xff)<<12 }
	tests := []struct {
		dev  uint64
		path string
		want string
	}{
		{dev(0, 45), "/media/usb/x", "fuseblk"},
		{dev(0, 46), "/home/alice/remote box/f", "fuse.sshfs"},
		{dev(0, 47), "/srv/photos/a.jpg", "fuse.exfat-fuse"},
		{dev(0, 47), "/elsewhere", "fuse.exfat-fuse"}, // device matches, path does not
		{dev(0, 48), "/mnt/odd", "fuse"},
		{dev(0, 99), "/media/usb/x", ""},
		{dev(252, 0), "/etc", "ext4"},
	}
	for _, tt := range tests {
		if got := mountType(strings.NewReader(mountinfo), tt.dev, tt.path); got != tt.want {
			t.Errorf("mountType(%d:%d, %q) = %q, want %q", devMajor(tt.dev), devMinor(tt.dev), tt.path, got, tt.want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`/a\040b`:    "/a b",
		`/t\011ab`:   "/t\tab",
		`/back\134s`: `/back\s`,
		`/plain`:     "/plain",
		`/odd\04`:    `/odd\04`,
		`/x\999`:     `/x\999`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDevNumbers(t *testing.T) {
	t.Parallel()
	// makedev(259, 1048577) as glibc encodes it.
	dev := uint64(259&0xfff)<<8 | uint64(259&^0xfff)<<32 | uint64(1048577&0xff) | uint64(1048577&^0xff)<<12
	if devMajor(dev) != 259 || devMinor(dev) != 1048577 {
		t.Errorf("major, minor = %d, %d", devMajor(dev), devMinor(dev))
	}
}

func TestFSType(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ft, err := FSType(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FSType(%q) = %q", dir, ft)
	if ft == "" {
		t.Errorf("FSType of the test directory is unknown")
	}
	if ft, err := FSType("/dev/shm"); err == nil && ft != "tmpfs" {
		t.Errorf("FSType(/dev/shm) = %q, want tmpfs", ft)
	}
	if ft, err := FSType("/proc"); err != nil || ft != "" {
		t.Errorf("FSType(/proc) = %q, %v; want \"\" (not a file store)", ft, err)
	}
	if _, err := FSType(dir + "/missing"); err == nil {
		t.Error("FSType of a missing path succeeded")
	}
}
