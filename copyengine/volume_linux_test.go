package copyengine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// volKind is a filesystem the volume identity is measured on: how to make
// an image of it and how to mount one.
type volKind struct {
	name  string
	size  int64
	mkfs  []string                              // tool and arguments; the image is appended
	mount func(dev, dir string) (string, error) // mounts the loop device dev on dir
	pkgs  map[string]string                     // tools and the Debian packages that have them
	want  func(t *testing.T, img string) string // the serial in the identity, "" for none known
	none  bool                                  // no identity can be had
	post  func(t *testing.T, img, name string)  // adjusts a new image
	// kernel names the kernel driver the mount needs; without it the
	// kind is skipped (a kernel built without it, not a missing tool).
	kernel string
}

func mountTool(tool string, args ...string) func(dev, dir string) (string, error) {
	return func(dev, dir string) (string, error) { return sbin(tool, append(args, dev, dir)...) }
}

// blkidUUID is what blkid calls the UUID of the filesystem in img.
func blkidUUID(t *testing.T, img string) string {
	out, err := sbin("blkid", "-p", "-o", "value", "-s", "UUID", img)
	if err != nil {
		t.Fatalf("blkid %s: %v\n%s", img, err, out)
	}
	return strings.TrimSpace(out)
}

var volKinds = []volKind{
	{name: "ext4", size: 16 << 20, mkfs: []string{"mkfs.ext4", "-q", "-F"}, mount: mountTool("mount", "-t", "ext4"),
		pkgs: map[string]string{"mkfs.ext4": "e2fsprogs"}},
	{name: "xfs", size: 300 << 20, mkfs: []string{"mkfs.xfs", "-q", "-f"}, mount: mountTool("mount", "-t", "xfs"),
		pkgs: map[string]string{"mkfs.xfs": "xfsprogs"},
		want: func(t *testing.T, img string) string { return strings.ReplaceAll(blkidUUID(t, img), "-", "") }},
	{name: "btrfs", size: 128 << 20, mkfs: []string{"mkfs.btrfs", "-q", "-f"}, mount: mountTool("mount", "-t", "btrfs"),
		pkgs: map[string]string{"mkfs.btrfs": "btrfs-progs"}},
	{name: "exfat-fuse", size: 16 << 20, mkfs: []string{"mkfs.exfat"}, mount: mountTool("mount.exfat-fuse"),
		pkgs: map[string]string{"mkfs.exfat": "exfatprogs", "mount.exfat-fuse": "exfat-fuse"}, want: blkidUUID},
	{name: "ntfs-3g", size: 16 << 20, mkfs: []string{"mkfs.ntfs", "-Q", "-F"}, mount: mountTool("ntfs-3g"),
		pkgs: map[string]string{"mkfs.ntfs": "ntfs-3g", "ntfs-3g": "ntfs-3g"}, want: blkidUUID,
		// mkntfs draws the serial from the clock's seconds: two images made
		// in one second would share it, two real volumes do not.
		post: func(t *testing.T, img, name string) {
			f, err := os.OpenFile(img, os.O_WRONLY, 0)
			noErr(t, err)
			_, err = f.WriteAt([]byte("serial"+name+"!"), 0x48)
			noErr(t, err)
			noErr(t, f.Close())
		}},
	// The kernel's drivers, where this kernel has them.
	{name: "exfat (kernel)", size: 16 << 20, mkfs: []string{"mkfs.exfat"}, mount: mountTool("mount", "-t", "exfat"),
		pkgs: map[string]string{"mkfs.exfat": "exfatprogs"}, want: blkidUUID, kernel: "exfat"},
	{name: "vfat (kernel)", size: 16 << 20, mkfs: []string{"mkfs.vfat"}, mount: mountTool("mount", "-t", "vfat"),
		pkgs: map[string]string{"mkfs.vfat": "dosfstools"}, want: blkidUUID, kernel: "vfat"},
	// fusefat's mounts name no device ("fusefat") and report f_fsid 0.
	{name: "fusefat", size: 16 << 20, mkfs: []string{"mkfs.vfat"}, mount: mountTool("fusefat", "-o", "rw+"),
		pkgs: map[string]string{"mkfs.vfat": "dosfstools", "fusefat": "fusefat"}, none: true},
}

// TestVolumeIdentity measures, for each filesystem, that the volume
// identity is the same when a volume is mounted again (from another loop
// device, as a stick plugged into another port) and differs for another
// volume mounted at the same place; where the identity is a serial number
// or UUID, that it is the one blkid reads. Where no identity can be had it
// must say so (zero), never make one up from the device or mount point.
func TestVolumeIdentity(t *testing.T) {
	t.Parallel()
	if err := loopfs.Available("ext4"); err != nil {
		skipVolume(t, err.Error())
	}
	for _, k := range volKinds {
		t.Run(k.name, func(t *testing.T) {
			for tool, pkg := range k.pkgs {
				if _, err := sbinPath(tool); err != nil {
					skipVolume(t, fmt.Sprintf("%s not found (Debian: apt-get install %s)", tool, pkg))
				}
			}
			if k.kernel != "" && !kernelHas(k.kernel) {
				_, _ = sbin("modprobe", k.kernel)
				if !kernelHas(k.kernel) {
					t.Skipf("skipping: this kernel has no %s driver", k.kernel)
				}
			}
			dir := t.TempDir()
			mnt := filepath.Join(dir, "mnt")
			noErr(t, os.Mkdir(mnt, 0o755))
			imgA, imgB := makeImage(t, k, dir, "a"), makeImage(t, k, dir, "b")

			a1 := identifyMounted(t, k, imgA, mnt, "")
			// B takes the loop device A had; A comes back on another.
			devB := attach(t, imgB)
			b := identifyMounted(t, k, "", mnt, devB)
			a2 := identifyMounted(t, k, imgA, mnt, "")
			detach(t, devB)
			t.Logf("A %q, A again %q, B %q", a1.ID, a2.ID, b.ID)
			if k.none {
				for _, v := range []hashcache.VolumeInfo{a1, a2, b} {
					if v.Volume != 0 {
						t.Errorf("identity %q where none can be had", v.ID)
					}
				}
				t.Logf("no identity: %s", a1.Why)
				return
			}
			if a1.Volume == 0 || b.Volume == 0 {
				t.Fatalf("no identity: %s / %s", a1.Why, b.Why)
			}
			if a2.Volume != a1.Volume {
				t.Errorf("volume A mounted again has identity %q, was %q", a2.ID, a1.ID)
			}
			if b.Volume == a1.Volume {
				t.Errorf("volumes A and B share identity %q", b.ID)
			}
			if k.want != nil {
				if w := k.want(t, imgA); w == "" || !strings.HasSuffix(a1.ID, ":"+w) {
					t.Errorf("identity of A %q does not end in its UUID %q", a1.ID, w)
				}
				if w := k.want(t, imgB); w == "" || !strings.HasSuffix(b.ID, ":"+w) {
					t.Errorf("identity of B %q does not end in its UUID %q", b.ID, w)
				}
			}
		})
	}
	t.Run("tmpfs", func(t *testing.T) {
		mnt := t.TempDir()
		ids := map[hashcache.Volume]bool{}
		for i := 0; i < 2; i++ {
			if out, err := sbin("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt); err != nil {
				skipVolume(t, fmt.Sprintf("cannot mount a tmpfs: %v: %s", err, out))
			}
			v, err := hashcache.Identify(mnt)
			unmountDir(t, mnt)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("tmpfs mount %d: %q %s", i+1, v.ID, v.Why)
			if v.Volume == 0 {
				t.Skipf("this kernel gives tmpfs no identity: %s", v.Why)
			}
			ids[v.Volume] = true
		}
		if len(ids) != 2 {
			t.Errorf("two tmpfs mounts, one after the other, share an identity: the second holds none of the first's files")
		}
	})
}

// kernelHas reports whether /proc/filesystems lists fstype.
func kernelHas(fstype string) bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == fstype {
			return true
		}
	}
	return false
}

func skipVolume(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv(loopfs.RequireEnv) != "" {
		t.Fatalf("%s (and %s is set)", reason, loopfs.RequireEnv)
	}
	t.Skipf("skipping: %s", reason)
}

func makeImage(t *testing.T, k volKind, dir, name string) string {
	t.Helper()
	img := filepath.Join(dir, name+".img")
	f, err := os.Create(img)
	noErr(t, err)
	noErr(t, f.Truncate(k.size))
	noErr(t, f.Close())
	if out, err := sbin(k.mkfs[0], append(k.mkfs[1:], img)...); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(k.mkfs, " "), err, out)
	}
	if k.post != nil {
		k.post(t, img, name)
	}
	return img
}

func attach(t *testing.T, img string) string {
	t.Helper()
	out, err := sbin("losetup", "--find", "--show", img)
	if err != nil {
		skipVolume(t, fmt.Sprintf("losetup could not attach a loop device: %v: %s", err, out))
	}
	return strings.TrimSpace(out)
}

func detach(t *testing.T, dev string) {
	t.Helper()
	if out, err := sbin("losetup", "-d", dev); err != nil {
		t.Errorf("losetup -d %s: %v\n%s", dev, err, out)
	}
}

// identifyMounted mounts img (or the attached device dev) on mnt, asks for
// the identity of the volume, and unmounts (and detaches what it attached).
func identifyMounted(t *testing.T, k volKind, img, mnt, dev string) hashcache.VolumeInfo {
	t.Helper()
	if dev == "" {
		dev = attach(t, img)
		defer detach(t, dev)
	}
	if out, err := k.mount(dev, mnt); err != nil {
		t.Fatalf("mount %s on %s: %v\n%s", dev, mnt, err, out)
	}
	defer unmountDir(t, mnt)
	v, err := hashcache.Identify(mnt)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	noErr(t, unix.Stat(mnt, &st))
	if v.Dev != st.Dev {
		t.Errorf("Identify reports device %d for a directory on %d", v.Dev, st.Dev)
	}
	return v
}

// unmountDir unmounts dir; a FUSE daemon may keep it busy for a moment.
func unmountDir(t *testing.T, dir string) {
	t.Helper()
	var out string
	var err error
	for i := 0; i < 40; i++ {
		if !isMountPoint(dir) {
			return
		}
		if out, err = sbin("umount", dir); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("umount %s: %v\n%s", dir, err, out)
	_, _ = sbin("umount", "--lazy", dir)
}

// TestCacheTwoExfatVolumes: two exFAT sticks mounted in turn at one mount
// point. The copy to stick A is recorded in the hash cache; stick B holds,
// at the same path, a corrupted copy with the same size and mtime. With B
// mounted, a verify that uses the cache must read B's file and report it,
// and a --checksum run must read it and copy it again: an entry recorded on
// A says nothing about B.
func TestCacheTwoExfatVolumes(t *testing.T) {
	t.Parallel()
	for tool, pkg := range map[string]string{"mkfs.exfat": "exfatprogs", "mount.exfat-fuse": "exfat-fuse", "losetup": "mount"} {
		if _, err := sbinPath(tool); err != nil {
			skipVolume(t, fmt.Sprintf("%s not found (Debian: apt-get install %s)", tool, pkg))
		}
	}
	if err := loopfs.Available("ext4"); err != nil {
		skipVolume(t, err.Error())
	}
	var k volKind
	for _, v := range volKinds {
		if v.name == "exfat-fuse" {
			k = v
		}
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "usb")
	noErr(t, os.Mkdir(mnt, 0o755))
	devA, devB := attach(t, makeImage(t, k, dir, "a")), attach(t, makeImage(t, k, dir, "b"))
	defer detach(t, devA)
	defer detach(t, devB)
	mount := func(dev string) {
		t.Helper()
		if out, err := k.mount(dev, mnt); err != nil {
			t.Fatalf("mount %s on %s: %v\n%s", dev, mnt, err, out)
		}
	}

	src := filepath.Join(scratchDir(t), "src")
	good := pattern(41, 100<<10)
	writeFile(t, filepath.Join(src, "photo.jpg"), good)
	setTimes(t, filepath.Join(src, "photo.jpg"), oldTime)
	settleSources()
	dst := filepath.Join(mnt, "backup")
	db := filepath.Join(t.TempDir(), "hashes.db")

	// Stick B: the same file, rotted, with the size and mtime of the copy.
	mount(devB)
	bad := append([]byte(nil), good...)
	bad[5000] ^= 0xff
	writeFile(t, filepath.Join(dst, "photo.jpg"), bad)
	setTimes(t, filepath.Join(dst, "photo.jpg"), oldTime)
	unmountDir(t, mnt)

	// Stick A: copied, and recorded in the cache.
	mount(devA)
	opt := copyengine.Options{Sources: []string{src}, Dest: dst}
	if sum := cachedRun(t, db, opt); sum.Copied != 1 {
		t.Fatalf("copy to A: copied %d, want 1", sum.Copied)
	}
	// exFAT has no change time: the cache vouches for none of its files,
	// and size and mtime decide (see TestExfatDestRewriteKeptMtime).
	if sum := cachedRun(t, db, opt); sum.Skipped != 1 || sum.CacheHits != 0 {
		t.Fatalf("rerun on A: skipped %d, %d cache hits; want 1, 0 (size and mtime decide)", sum.Skipped, sum.CacheHits)
	}
	unmountDir(t, mnt)

	mount(devB)
	defer unmountDir(t, mnt)
	rep := verifyCached(t, db, src, dst)
	if rep.OK() {
		t.Errorf("verify with the cache, stick B mounted: identical (%d digests from the cache); want photo.jpg to differ", rep.Known)
	}
	if rep.Known > 1 {
		t.Errorf("verify took %d digests from the cache; only the source's may come from it", rep.Known)
	}

	opt.Checksum = true
	sum := cachedRun(t, db, opt)
	if sum.Copied != 1 {
		t.Errorf("--checksum on stick B: copied %d, skipped %d, %d cache hits; want photo.jpg copied", sum.Copied, sum.Skipped, sum.CacheHits)
	}
	got, err := os.ReadFile(filepath.Join(dst, "photo.jpg"))
	noErr(t, err)
	if string(got) != string(good) {
		t.Errorf("stick B's photo.jpg still differs from its source")
	}

	// The other way round: the cache now holds B's entry for the path; A
	// is read, not vouched for by it.
	unmountDir(t, mnt)
	mount(devA)
	rep = verifyCached(t, db, src, dst)
	if !rep.OK() || rep.Known != 1 || rep.Files != 1 {
		t.Errorf("verify with the cache, stick A mounted again: %+v; want identical, 1 digest from the cache (the source's)", rep)
	}
}

// verifyCached compares src and dst as `fastcopy verify` does with the
// hash cache db.
func verifyCached(t *testing.T, db, src, dst string) treeverify.Report {
	t.Helper()
	hc, err := hashcache.Open(db, hashcache.Options{ReadOnly: true})
	noErr(t, err)
	rep, err := treeverify.CompareTrees(context.Background(), src, dst, treeverify.TreeOptions{Known: copyengine.CacheKnown(hc, src, dst)})
	noErr(t, hc.Close())
	noErr(t, err)
	return rep
}
