//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mountExfatCLI makes a small exFAT image, mounts it through exfat-fuse and
// returns the mount point, or skips the test saying what is missing.
func mountExfatCLI(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to attach a loop device and mount through FUSE")
	}
	for _, tool := range []string{"mkfs.exfat", "mount.exfat-fuse", "losetup", "umount"} {
		if _, err := sbinLook(tool); err != nil {
			t.Skipf("skipping: %s not found (Debian: exfatprogs, exfat-fuse, mount)", tool)
		}
	}
	for _, dev := range []string{"/dev/fuse", "/dev/loop-control"} {
		if _, err := os.Stat(dev); err != nil {
			t.Skipf("skipping: no %s here", dev)
		}
	}
	img := filepath.Join(t.TempDir(), "exfat.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := sbinRun("mkfs.exfat", img); err != nil {
		t.Fatalf("mkfs.exfat: %v\n%s", err, out)
	}
	out, err := sbinRun("losetup", "--find", "--show", img)
	if err != nil {
		t.Skipf("skipping: losetup: %v: %s", err, out)
	}
	dev, mnt := strings.TrimSpace(out), t.TempDir()
	t.Cleanup(func() {
		for i := 0; i < 40; i++ {
			if _, err := sbinRun("umount", mnt); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		_, _ = sbinRun("losetup", "-d", dev)
	})
	if out, err := sbinRun("mount.exfat-fuse", dev, mnt); err != nil {
		t.Fatalf("mount.exfat-fuse: %v\n%s", err, out)
	}
	return mnt
}

func sbinLook(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(d, tool); fileExistsCLI(p) {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func fileExistsCLI(p string) bool { _, err := os.Stat(p); return err == nil }

func sbinRun(tool string, args ...string) (string, error) {
	p, err := sbinLook(tool)
	if err != nil {
		return "", err
	}
	out, err := exec.Command(p, args...).CombinedOutput()
	return string(out), err
}

// TestCaseCollisionExfat is the reproduction: a source directory
// holding README and readme, copied to exFAT. The first run fails exactly
// one of them, by name, with the collision message, and exits 3; the rerun
// keeps the same one; fastcopy verify --no-cache reports that one missing
// and nothing else.
func TestCaseCollisionExfat(t *testing.T) {
	t.Parallel()
	mnt := mountExfatCLI(t)
	bin, err := exec.LookPath("fastcopy")
	if err != nil {
		bin = buildFastcopy(t)
	}
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"README": "upper\n", "readme": "lower case\n"} {
		if err := os.WriteFile(filepath.Join(src, "docs", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(mnt, "copy")
	run := func(args ...string) (string, string, int) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir(), "GORACE=atexit_sleep_ms=0")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	for _, name := range []string{"first run", "rerun"} {
		_, stderr, code := run(src, dst)
		if code != 3 {
			t.Errorf("%s: exit %d, want 3; stderr:\n%s", name, code, stderr)
		}
		want := `"docs/readme": not copied: "readme" and "README" are one name on the case-insensitive destination filesystem`
		if !strings.Contains(stderr, want) || strings.Count(stderr, "error:") != 1 {
			t.Errorf("%s: stderr does not fail docs/readme alone with the collision message:\n%s", name, stderr)
		}
		got, err := os.ReadFile(filepath.Join(dst, "docs", "README"))
		if err != nil || string(got) != "upper\n" {
			t.Errorf("%s: docs/README holds %q (%v), want the source README's data", name, got, err)
		}
		ents, _ := os.ReadDir(filepath.Join(dst, "docs"))
		if len(ents) != 1 || ents[0].Name() != "README" {
			t.Errorf("%s: docs holds %v, want README alone", name, ents)
		}
		stdout, stderr, code := run("verify", "--no-cache", src, dst)
		if code != 4 || !strings.Contains(stdout, `"docs/readme": one name with "README" on the destination`) || strings.Count(stdout, "\n") != 2 {
			t.Errorf("%s: verify exit %d, want 4 with docs/readme alone missing:\n%s%s", name, code, stdout, stderr)
		}
	}
}
