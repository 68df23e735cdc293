//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// needRootForMount skips a test that needs root for a bind mount, saying
// why (and fails where FASTCOPY_REQUIRE_LOOPFS asks for such tests).
func needRootForMount(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("FASTCOPY_REQUIRE_LOOPFS") != "" {
			t.Fatal("needs root for a bind mount (and FASTCOPY_REQUIRE_LOOPFS is set)")
		}
		t.Skip("skipping: needs root for a bind mount")
	}
}

// bindMount makes the directory to (and its parents) if need be, mounts
// from at it and unmounts it when the test ends (before the temporary
// directories are removed: cleanups run last first). One the test
// unmounted itself (EINVAL) is not an error.
func bindMount(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(from, to, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("mount --bind %s %s: %v", from, to, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(to, unix.MNT_DETACH); err != nil && err != unix.EINVAL {
			t.Errorf("umount %s: %v", to, err)
		}
	})
}

// TestMoveSourceBindMountedInDest moves a tree into a DEST in which a
// directory of the source is bind-mounted under its own name: DEST's
// sub/f is the source's sub/f, the same inode. "Found unchanged" must not
// lead to removing the source, which is the only copy there is.
func TestMoveSourceBindMountedInDest(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	writeTestFile(t, filepath.Join(src, "sub", "f"), "precious")
	writeTestFile(t, filepath.Join(src, "top"), "top")
	bindMount(t, filepath.Join(src, "sub"), filepath.Join(dst, "sub"))

	r := runBinary(t, bin, 0, 0, "--no-cache", "-v", "--move", src, dst)
	if err := unix.Unmount(filepath.Join(dst, "sub"), unix.MNT_DETACH); err != nil {
		t.Fatalf("umount: %v", err)
	}
	var found bool
	for _, p := range []string{filepath.Join(src, "sub", "f"), filepath.Join(dst, "sub", "f")} {
		if b, err := os.ReadFile(p); err == nil && string(b) == "precious" {
			found = true
		}
	}
	if !found {
		t.Errorf("--move with the source's sub bind-mounted at DEST/sub: exit %d, and sub/f (\"precious\") is on neither side after the unmount:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestBackupDirInsideDestBindMount names --backup-dir through a bind mount
// of DEST: the old versions would land in DEST, where --delete meets them
// as files the source lacks. Like --log and --manifest, it must be refused
// (exit 2) by identity, not by the spelling of its path.
func TestBackupDirInsideDestBindMount(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst, bind := filepath.Join(work, "src"), filepath.Join(work, "dst"), filepath.Join(work, "bind")
	writeTestFile(t, filepath.Join(src, "a"), "new1")
	writeTestFile(t, filepath.Join(dst, "a"), "old")
	writeTestFile(t, filepath.Join(dst, "b"), "gone")
	bindMount(t, dst, bind)

	r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--backup-dir", filepath.Join(bind, "bk"), src, dst)
	if r.code != 2 || !strings.Contains(r.stderr, "inside the destination") {
		t.Errorf("--backup-dir %s (DEST through a bind mount): exit %d, want 2 naming it inside the destination:\n%s%s", filepath.Join(bind, "bk"), r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "b")); err != nil || string(b) != "gone" {
		if _, err := os.Stat(filepath.Join(dst, "bk", "bk")); err == nil {
			t.Errorf("the run backed up its own backup directory (DEST/bk/bk exists)")
		}
	}
}

// TestMoveSourceRewrittenMtimeRestored rewrites a source file in place,
// same size, after its copy is in place and before the run ends, and puts
// its mtime back (as touch -d, an editor or a sync client does): its
// change time moved. --move must keep it (and fail it, exit 3): removing
// it loses the only copy of the new content.
func TestMoveSourceRewrittenMtimeRestored(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	r := rewriteDuringMove(t, bin, src, dst)
	if _, err := os.Stat(filepath.Join(dst, ".z.fastcopy-tmp")); err == nil {
		t.Log("z still being written")
	}
	var found bool
	for _, f := range []string{filepath.Join(src, "a"), filepath.Join(dst, "a")} {
		if b, err := os.ReadFile(f); err == nil && bytes.Equal(b, []byte("version-2\n")) {
			found = true
		}
	}
	if !found {
		t.Errorf("a rewritten after its copy (mtime put back): exit %d, and version-2 is on neither side:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.code == 0 {
		t.Errorf("exit 0 although a source changed after its copy")
	}
}

// TestDeleteGuardDestByAnotherPath mirrors an ext4 source into DEST, then
// names the same DEST through a bind mount (as a USB disk automounted at
// /media/u/BACKUP one day and /media/u/BACKUP1 the next) with another,
// non-empty source filesystem: the guard that refuses a source on another
// filesystem than the last mirror into this destination must still apply.
// Keyed by DEST's path with symlinks resolved, it forgets the destination
// and empties it.
func TestDeleteGuardDestByAnotherPath(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	a := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	b := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	work := t.TempDir()
	dst, bind, cache := filepath.Join(work, "dst"), filepath.Join(work, "bind"), filepath.Join(work, "c.db")
	for i := 1; i <= 3; i++ {
		writeTestFile(t, filepath.Join(a.Dir, "photos", "f"+strconv.Itoa(i)), "photo")
	}
	writeTestFile(t, filepath.Join(b.Dir, "photos", "other"), "other")
	if r := runBinary(t, bin, 0, 0, "--delete", "--cache", cache, filepath.Join(a.Dir, "photos"), dst); r.code != 0 {
		t.Fatalf("first mirror: exit %d:\n%s", r.code, r.stderr)
	}
	if r := runBinary(t, bin, 0, 0, "--delete", "--cache", cache, filepath.Join(b.Dir, "photos"), dst); r.code != 2 {
		t.Fatalf("mirror of another filesystem into the same path: exit %d, want 2 (the guard):\n%s", r.code, r.stderr)
	}
	bindMount(t, dst, bind)
	r := runBinary(t, bin, 0, 0, "--delete", "--cache", cache, filepath.Join(b.Dir, "photos"), bind)
	if _, err := os.Stat(filepath.Join(dst, "f1")); r.code != 2 || err != nil {
		t.Errorf("the same DEST through a bind mount, another source filesystem: exit %d (want 2), f1 kept: %v:\n%s%s", r.code, err == nil, r.stdout, r.stderr)
	}
}

// TestDeleteMountInDest mirrors into a DEST in which a directory outside
// DEST is bind-mounted at a name the source lacks (a volume mounted into a
// backup tree). --delete must not empty it: its files are outside DEST,
// on another mount, and the dry run, which said "would delete" for the
// mount point too, did not describe the real run, which empties it and
// then fails on the mount point (EBUSY, exit 3).
func TestDeleteMountInDest(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst, outside := filepath.Join(work, "src"), filepath.Join(work, "dst"), filepath.Join(work, "outside")
	writeTestFile(t, filepath.Join(src, "a"), "a")
	writeTestFile(t, filepath.Join(outside, "important"), "not DEST's")
	bindMount(t, outside, filepath.Join(dst, "mnt"))
	n := runBinary(t, bin, 0, 0, "--no-cache", "-n", "-v", "--delete", src, dst)
	if n.code != 0 || !strings.Contains(n.stderr, `"mnt": a mount point`) || strings.Contains(n.stderr, "would-delete") {
		t.Errorf("-n --delete with a mount at DEST/mnt: exit %d, want 0, the mount point named as kept and nothing to delete:\n%s%s", n.code, n.stdout, n.stderr)
	}
	r := runBinary(t, bin, 0, 0, "--no-cache", "-v", "--delete", src, dst)
	if r.code != 0 || !strings.Contains(r.stderr, `"mnt": a mount point`) {
		t.Errorf("--delete with a mount at DEST/mnt: exit %d, want 0 and the mount point named as kept:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(outside, "important")); err != nil {
		t.Errorf("--delete removed a file outside DEST through a mount in DEST (exit %d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
}

// TestMoveXattrNotKept moves a file with an extended attribute onto exFAT,
// which cannot keep it: the copy is made and "not kept" is warned about,
// but removing the source then destroys the attribute for good, and the
// run says exit 0, "moved". A source whose copy lacks what it has must be
// kept (and the run must not exit 0).
func TestMoveXattrNotKept(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.ExfatFUSE, Size: 64 << 20})
	src := filepath.Join(t.TempDir(), "src")
	writeTestFile(t, filepath.Join(src, "f"), "f")
	if err := unix.Setxattr(filepath.Join(src, "f"), "user.tag", []byte("important"), 0); err != nil {
		t.Skipf("skipping: the temporary directory cannot hold a user xattr: %v", err)
	}
	r := runBinary(t, bin, 0, 0, "--no-cache", "-v", "--move", src, filepath.Join(fs.Dir, "dst"))
	if _, err := os.Lstat(filepath.Join(src, "f")); err != nil || r.code == 0 {
		t.Errorf("--move onto exFAT of a file with user.tag: exit %d, source kept: %v (want kept, not exit 0):\n%s%s", r.code, err == nil, r.stdout, r.stderr)
	}
}

// TestBackupDirInsideSourceBindMount names --backup-dir through a bind
// mount of the source: refused (exit 2) when spelled inside the source,
// it must be refused by identity too, or the old versions are written
// into the source and copied by the next run.
func TestBackupDirInsideSourceBindMount(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst, bind := filepath.Join(work, "src"), filepath.Join(work, "dst"), filepath.Join(work, "bind")
	writeTestFile(t, filepath.Join(src, "a"), "a")
	writeTestFile(t, filepath.Join(dst, "b"), "gone")
	bindMount(t, src, bind)
	r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--backup-dir", filepath.Join(bind, "bk"), src, dst)
	if r.code != 2 || !strings.Contains(r.stderr, "inside the source") {
		t.Errorf("--backup-dir %s (the source through a bind mount): exit %d, want 2 naming it inside the source:\n%s%s", filepath.Join(bind, "bk"), r.code, r.stdout, r.stderr)
	}
}

// rewriteDuringMove runs `fastcopy --move src dst` on a small file a and a
// 6 MiB file z, one worker at 1 MiB/s, and once a's copy has its name
// rewrites a with new content of the same size and puts its mtime back
// (as touch -d, an editor or a sync client does). It returns the run's
// result.
func rewriteDuringMove(t *testing.T, bin, src, dst string) result {
	t.Helper()
	writeTestFile(t, filepath.Join(src, "a"), "version-1\n")
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(src, "a"), old, old); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 6<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "z"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	// One worker, a at 1 MiB/s: a is copied first, z keeps the run going
	// for seconds after a's copy took its name.
	p := startBinary(t, bin, "--no-cache", "-v", "-j", "1", "--bwlimit", "1M", "--move", src, dst)
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(filepath.Join(dst, "a")); err == nil && string(b) == "version-1\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the copy of a never appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(src, "a"), []byte("version-2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(src, "a"), old, old); err != nil {
		t.Fatal(err)
	}
	return p.wait(t, 0, 0)
}
