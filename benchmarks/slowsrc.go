//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// slowSource is a source filesystem on a loop device whose reads are
// throttled by a block-I/O cgroup, to stand in for a USB disk: every tool
// runs inside the cgroup, so its reads of the source pay the limits.
type slowSource struct {
	img, mnt, loop string
	cgroupDir      string
	desc           string // for the report
}

// setupSlowSource makes an ext4 image big enough for sets, attaches it to a
// loop device (direct I/O, so the backing file is not cached twice), mounts
// it and creates the throttled cgroup. A non-empty reason means the mode
// cannot run here and nothing was left behind.
func setupSlowSource(ctx context.Context, work string, sets []*dataset, bps, iops int64) (s *slowSource, reason string, err error) {
	if os.Geteuid() != 0 {
		return nil, "needs root (loop devices, mount, cgroups)", nil
	}
	for _, b := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(b); err != nil {
			return nil, b + " is not installed", nil
		}
	}
	ctl, reason := findIOCgroup()
	if reason != "" {
		return nil, reason, nil
	}

	var bytes, inodes int64
	for _, d := range sets {
		dirs := map[string]bool{}
		for _, f := range d.files {
			bytes += (f.size + 4095) &^ 4095
			dirs[filepath.Dir(f.rel)] = true
		}
		inodes += int64(len(d.files) + len(dirs))
	}
	size := bytes + bytes/5 + inodes*512 + 256*mib
	s = &slowSource{img: filepath.Join(work, "slow.img"), mnt: filepath.Join(work, "slow")}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	var dev string
	if s.loop, dev, err = loopExt4(ctx, s.img, s.mnt, size, "-b", "4096", "-N", fmt.Sprint(inodes+inodes/5+1024)); err != nil {
		return nil, "", err
	}
	if s.cgroupDir, err = ctl.create(dev, bps, iops); err != nil {
		return nil, "", err
	}
	s.desc = fmt.Sprintf("source on ext4 in a %s image on %s (direct I/O), reads throttled to %s/s and %d IOPS with %s",
		humanBytes(size), s.loop, humanBytes(bps), iops, ctl.describe())
	return s, "", nil
}

// loopExt4 makes an ext4 image of size bytes at img (mkfs arguments
// extra), attaches it to a loop device with direct I/O (so that the image
// file is not cached twice) and mounts it at mnt. It returns the loop
// device and its "major:minor", for cgroup limits; loop is set as soon as
// there is one to detach.
func loopExt4(ctx context.Context, img, mnt string, size int64, extra ...string) (loop, dev string, err error) {
	_ = os.Remove(img)
	f, err := os.Create(img)
	if err != nil {
		return "", "", err
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		return "", "", err
	}
	args := append([]string{"-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"}, extra...)
	if _, err := output(ctx, "/", "mkfs.ext4", append(args, img)...); err != nil {
		return "", "", err
	}
	if loop, err = output(ctx, "/", "losetup", "--find", "--show", "--direct-io=on", img); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return loop, "", err
	}
	if _, err := output(ctx, "/", "mount", loop, mnt); err != nil {
		return loop, "", err
	}
	var st unix.Stat_t
	if err := unix.Stat(loop, &st); err != nil {
		return loop, "", err
	}
	return loop, fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)), nil
}

// wrap runs argv inside the throttled cgroup: the shell moves itself in,
// then becomes the tool, so the tool's rusage is its own.
func (s *slowSource) wrap(argv []string) []string {
	return append([]string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(s.cgroupDir, "cgroup.procs")}, argv...)
}

// close undoes setupSlowSource; it is safe on a partly set-up source.
func (s *slowSource) close() {
	if s == nil {
		return
	}
	ctx := context.Background()
	if s.cgroupDir != "" {
		_ = os.Remove(s.cgroupDir)
	}
	if s.loop != "" {
		_, _ = output(ctx, "/", "umount", s.mnt)
		_, _ = output(ctx, "/", "losetup", "-d", s.loop)
	}
	_ = os.Remove(s.mnt)
	_ = os.Remove(s.img)
}

// ioCgroup is a cgroup hierarchy that can throttle block reads.
type ioCgroup struct {
	root string
	v2   bool
}

func (c ioCgroup) describe() string {
	if c.v2 {
		return "cgroup v2 io.max"
	}
	return "cgroup v1 blkio.throttle.read_bps_device / read_iops_device"
}

// findIOCgroup looks for a v1 blkio hierarchy (the first choice), then for
// a v2 hierarchy whose io controller is available.
func findIOCgroup() (ioCgroup, string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ioCgroup{}, "cannot read /proc/self/mountinfo: " + err.Error()
	}
	defer f.Close()
	var v2root string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 {
			continue
		}
		mnt, fstype, super := a[4], b[0], b[2]
		switch {
		case fstype == "cgroup" && hasOption(super, "blkio"):
			if _, err := os.Stat(filepath.Join(mnt, "blkio.throttle.read_bps_device")); err == nil {
				return ioCgroup{root: mnt}, ""
			}
		case fstype == "cgroup2" && v2root == "":
			v2root = mnt
		}
	}
	if v2root == "" {
		return ioCgroup{}, "no cgroup v1 blkio hierarchy and no cgroup v2 mount"
	}
	ctls, err := os.ReadFile(filepath.Join(v2root, "cgroup.controllers"))
	if err != nil || !hasWord(string(ctls), "io") {
		return ioCgroup{}, fmt.Sprintf("no cgroup v1 blkio hierarchy, and the io controller is not available in the cgroup v2 hierarchy at %s", v2root)
	}
	return ioCgroup{root: v2root, v2: true}, ""
}

// create makes the benchmark's cgroup with read limits on device dev
// ("major:minor") and returns its directory.
func (c ioCgroup) create(dev string, bps, iops int64) (string, error) {
	dir := filepath.Join(c.root, "fastcopy-bench")
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return "", err
	}
	write := func(name, val string) error {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(val), 0o644); err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
		return nil
	}
	var err error
	if c.v2 {
		// The parent must hand the io controller down to its children.
		if err = os.WriteFile(filepath.Join(c.root, "cgroup.subtree_control"), []byte("+io"), 0o644); err == nil {
			err = write("io.max", fmt.Sprintf("%s rbps=%d riops=%d", dev, bps, iops))
		}
	} else {
		if err = write("blkio.throttle.read_bps_device", fmt.Sprintf("%s %d", dev, bps)); err == nil {
			err = write("blkio.throttle.read_iops_device", fmt.Sprintf("%s %d", dev, iops))
		}
	}
	if err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	return dir, nil
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func hasWord(s, want string) bool {
	for _, w := range strings.Fields(s) {
		if w == want {
			return true
		}
	}
	return false
}
