package copyengine_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// exfatFS is an exFAT image on a loop device, mounted through FUSE
// (exfat-fuse): what a USB stick or SD card looks like to a kernel without
// the native exfat driver.
type exfatFS struct {
	t   *testing.T
	dev string
	dir string
}

// mountExfat makes a 64 MiB exFAT image and mounts it with exfat-fuse, or
// skips the test saying what is missing. The cleanup unmounts it and
// detaches the loop device.
func mountExfat(t *testing.T) *exfatFS {
	t.Helper()
	skip := func(reason string) {
		t.Helper()
		if os.Getenv(loopfs.RequireEnv) != "" {
			t.Fatalf("%s (and %s is set)", reason, loopfs.RequireEnv)
		}
		t.Skipf("skipping: %s", reason)
	}
	if os.Geteuid() != 0 {
		skip("needs root to attach a loop device and mount through FUSE")
	}
	for _, tool := range []struct{ name, pkg string }{
		{"mkfs.exfat", "exfatprogs"}, {"mount.exfat-fuse", "exfat-fuse"},
		{"losetup", "mount"}, {"umount", "mount"},
	} {
		if _, err := sbinPath(tool.name); err != nil {
			skip(fmt.Sprintf("%s not found (Debian: apt-get install %s)", tool.name, tool.pkg))
		}
	}
	for _, dev := range []string{"/dev/fuse", "/dev/loop-control"} {
		if _, err := os.Stat(dev); err != nil {
			skip(fmt.Sprintf("no %s: this kernel or container cannot do it", dev))
		}
	}
	img := filepath.Join(t.TempDir(), "exfat.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(64 << 20)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := sbin("mkfs.exfat", img); err != nil {
		t.Fatalf("mkfs.exfat: %v\n%s", err, out)
	}
	out, err := sbin("losetup", "--find", "--show", img)
	if err != nil {
		skip(fmt.Sprintf("losetup could not attach a loop device: %v: %s", err, out))
	}
	fs := &exfatFS{t: t, dev: strings.TrimSpace(out), dir: t.TempDir()}
	t.Cleanup(func() {
		fs.unmount()
		if out, err := sbin("losetup", "-d", fs.dev); err != nil {
			t.Errorf("losetup -d %s: %v\n%s", fs.dev, err, out)
		}
	})
	fs.mount()
	return fs
}

func (fs *exfatFS) mount() {
	fs.t.Helper()
	if out, err := sbin("mount.exfat-fuse", fs.dev, fs.dir); err != nil {
		fs.t.Fatalf("mount.exfat-fuse %s %s: %v\n%s", fs.dev, fs.dir, err, out)
	}
}

// unmount unmounts if mounted; a FUSE daemon may keep the mount busy for a
// moment after the last file is closed.
func (fs *exfatFS) unmount() {
	fs.t.Helper()
	var out string
	var err error
	for i := 0; i < 40; i++ {
		if !isMountPoint(fs.dir) {
			return
		}
		if out, err = sbin("umount", fs.dir); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	fs.t.Errorf("umount %s: %v\n%s", fs.dir, err, out)
	_, _ = sbin("umount", "--lazy", fs.dir)
}

// remount unmounts and mounts again: the FUSE daemon restarts and hands out
// new inode numbers, and every time comes from the disk again.
func (fs *exfatFS) remount() {
	fs.t.Helper()
	fs.unmount()
	fs.mount()
}

func (fs *exfatFS) path(elem ...string) string {
	return filepath.Join(append([]string{fs.dir}, elem...)...)
}

func isMountPoint(dir string) bool {
	var a, b unix.Stat_t
	if unix.Stat(dir, &a) != nil || unix.Stat(filepath.Dir(dir), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}

func sbinPath(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, tool); fileExists(p) {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func sbin(tool string, args ...string) (string, error) {
	p, err := sbinPath(tool)
	if err != nil {
		return "", err
	}
	out, err := exec.Command(p, args...).CombinedOutput()
	return string(out), err
}

// lookUp stats the files rels under root in that order, reading no
// directory, and returns their inode numbers. exfat-fuse numbers files in
// the order they are first looked up after a mount, so looking them up in
// another order than the last mount's gives them other numbers.
func lookUp(t *testing.T, root string, rels []string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, rel := range rels {
		p := filepath.Join(root, rel)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		out[p] = st.Ino
	}
	return out
}

// logRenumbered logs how many files have another inode number than their
// cache entry: the files that show the cache does not compare inode
// numbers on this filesystem.
func logRenumbered(t *testing.T, db string, now map[string]uint64) {
	t.Helper()
	k := renumbered(t, db, now)
	t.Logf("after a remount %d of %d files have another inode number than their cache entry", k, len(now))
	if k == 0 {
		t.Log("(so this run does not show that the cache ignores exfat-fuse's made-up inode numbers)")
	}
}

// renumbered counts the files whose cache entry holds another inode number
// than the file has now.
func renumbered(t *testing.T, db string, now map[string]uint64) int {
	t.Helper()
	hc, err := hashcache.Open(db, hashcache.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	n := 0
	for p, ino := range now {
		if e, ok := hc.Get(p); ok && e.Ino != ino {
			n++
		}
	}
	return n
}

// TestExfatFuseCache copies to and from an exFAT volume mounted through FUSE
// with the hash cache and checks that a rerun reads nothing: exFAT stores
// coarser times than the source's nanoseconds, exfat-fuse makes up inode
// numbers anew at every mount and reports the mtime as the ctime. With no
// change time the cache vouches for nothing there (see
// TestExfatDestRewriteKeptMtime), and size and mtime decide, as without a
// cache. After an unmount and a mount, a rerun in either direction reads no
// file content; a file changed on the volume is still found and copied.
func TestExfatFuseCache(t *testing.T) {
	t.Parallel()
	fs := mountExfat(t)

	typ, err := fileio.FSType(fs.dir)
	if err != nil {
		t.Fatal(err)
	}
	pol := hashcache.PolicyFor(typ)
	t.Logf("exfat-fuse mount: FSType %q, policy %+v", typ, pol)
	if typ != "fuseblk" {
		t.Errorf("FSType of an exfat-fuse mount is %q, want fuseblk", typ)
	}
	if pol.CheckInode || pol.CheckCtime {
		t.Errorf("policy %+v checks inode or ctime, which exfat-fuse makes up", pol)
	}

	// What the volume keeps of a time, and whether the policy's granularity
	// covers it: a stored mtime must fall in the granule of the one set.
	probe := fs.path("probe")
	writeFile(t, probe, []byte("probe"))
	for _, set := range []time.Time{
		time.Date(2021, 3, 4, 5, 6, 7, 123456789, time.UTC),
		time.Date(2021, 3, 4, 5, 6, 8, 999999999, time.UTC),
		time.Date(2021, 3, 4, 5, 6, 9, 5000000, time.UTC),
	} {
		if err := os.Chtimes(probe, set, set); err != nil {
			t.Fatal(err)
		}
		fs.remount()
		fi, err := os.Stat(probe)
		if err != nil {
			t.Fatal(err)
		}
		got := fi.ModTime()
		t.Logf("mtime set %s, read after remount %s", set.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano))
		g := pol.MtimeGranularity
		if got.UnixNano()-got.UnixNano()%int64(g) != set.UnixNano()-set.UnixNano()%int64(g) {
			t.Errorf("mtime set to %s reads %s after a remount: another %v granule", set.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), g)
		}
	}
	if err := os.Remove(probe); err != nil {
		t.Fatal(err)
	}

	db := filepath.Join(t.TempDir(), "hashes.db")
	src := filepath.Join(scratchDir(t), "src")
	files := map[string][]byte{
		"a.bin":         pattern(11, 300<<10),
		"odd-second":    pattern(12, 5000),
		"sub/b.txt":     []byte("bravo\n"),
		"sub/deep/c":    pattern(13, 70000),
		"sub/deep/byte": pattern(14, 1),
		"empty":         nil,
	}
	// Times with nanoseconds, on odd and even seconds, one a hair before
	// the next second: exFAT keeps less of each.
	mtimes := []time.Time{
		time.Date(2021, 6, 1, 10, 0, 0, 123456789, time.UTC),
		time.Date(2021, 6, 1, 10, 0, 1, 999999999, time.UTC),
		time.Date(2021, 6, 1, 10, 0, 3, 500000000, time.UTC),
		time.Date(2021, 6, 1, 10, 0, 4, 1, time.UTC),
	}
	rels := slices.Sorted(maps.Keys(files))
	for i, rel := range rels {
		p := filepath.Join(src, rel)
		writeFile(t, p, files[rel])
		mt := mtimes[i%len(mtimes)]
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	n := int64(len(files))
	reversed := slices.Clone(rels)
	slices.Reverse(reversed)
	// Let the ctimes settle, so that the first runs read every file at once.
	time.Sleep(100 * time.Millisecond)

	readFree := func(t *testing.T, what string, sum copyengine.Summary) {
		t.Helper()
		if sum.Copied != 0 || sum.Skipped != n || sum.BytesRead != 0 || sum.BytesHashed != 0 || sum.CacheHits != 0 {
			t.Errorf("%s: copied %d, skipped %d, read %d bytes (%d to hash), %d cache hits; want 0, %d, 0 (0), 0",
				what, sum.Copied, sum.Skipped, sum.BytesRead, sum.BytesHashed, sum.CacheHits, n)
		}
	}

	t.Run("ext4 to exFAT", func(t *testing.T) {
		dst := fs.path("dst")
		opt := copyengine.Options{Sources: []string{src}, Dest: dst}
		sum := cachedRun(t, db, opt)
		if sum.Copied != n {
			t.Fatalf("copied %d files, want %d", sum.Copied, n)
		}
		sameTree(t, src, dst)
		readFree(t, "rerun", cachedRun(t, db, opt))

		fs.remount()
		logRenumbered(t, db, lookUp(t, dst, reversed))
		readFree(t, "rerun after a remount", cachedRun(t, db, opt))
		sameTree(t, src, dst)
	})

	t.Run("exFAT to ext4", func(t *testing.T) {
		from := fs.path("dst")
		if !fileExists(from) {
			t.Skip("the copy to exFAT failed")
		}
		back := filepath.Join(scratchDir(t), "back")
		opt := copyengine.Options{Sources: []string{from}, Dest: back}
		sum := cachedRun(t, db, opt)
		if sum.Copied != n {
			t.Fatalf("copied %d files, want %d", sum.Copied, n)
		}
		sameTree(t, src, back)
		readFree(t, "rerun", cachedRun(t, db, opt))
		fs.remount()
		logRenumbered(t, db, lookUp(t, from, rels)) // the last mount numbered them in reverse
		readFree(t, "rerun after a remount", cachedRun(t, db, opt))

		// The coarse times do not hide a change: same size, new content, an
		// mtime a minute later. Only that file is copied.
		changed := filepath.Join(from, "sub", "deep", "c")
		writeFile(t, changed, pattern(99, 70000))
		later := mtimes[0].Add(time.Minute)
		if err := os.Chtimes(changed, later, later); err != nil {
			t.Fatal(err)
		}
		fs.remount()
		sum = cachedRun(t, db, opt)
		if sum.Copied != 1 || sum.Skipped != n-1 || sum.BytesHashed != 0 {
			t.Errorf("after changing one file: copied %d, skipped %d, %d bytes hashed; want 1, %d, 0",
				sum.Copied, sum.Skipped, sum.BytesHashed, n-1)
		}
		sameTree(t, from, back)
	})
}

// cachedRun is runCached for runs that must succeed.
func cachedRun(t *testing.T, db string, opt copyengine.Options) copyengine.Summary {
	t.Helper()
	sum, err := runCached(t, db, opt)
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	return sum
}
