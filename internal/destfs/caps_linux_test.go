package destfs_test

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// TestCannotKeep checks which refusals count as the filesystem's (noted
// once per kind, not a failure of the entry) and what the notes say.
func TestCannotKeep(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	perm := &os.PathError{Op: "chown", Path: root + "/a", Err: syscall.EPERM}
	notsup := &os.PathError{Op: "setxattr user.x", Path: root + "/a", Err: syscall.ENOTSUP}
	for _, privileged := range []bool{false, true} {
		var fi destfs.Info
		fi.Start(destfs.Config{RootPath: root, SkipWrite: func() bool { return true }, Privileged: privileged})
		if got := fi.CannotKeep(destfs.LostOwners, perm); got != privileged {
			t.Errorf("privileged %v: CannotKeep(owners, EPERM) = %v", privileged, got)
		}
		if !fi.CannotKeep(destfs.LostXattrs, notsup) || !fi.CannotKeep(destfs.LostXattrs, notsup) {
			t.Errorf("privileged %v: ENOTSUP on an xattr is not the filesystem's", privileged)
		}
		if fi.CannotKeep(destfs.LostModes, errors.New("some other failure")) || fi.CannotKeep(destfs.LostModes, nil) {
			t.Errorf("privileged %v: another failure taken for the filesystem's", privileged)
		}
		notes := strings.Join(fi.NotKept(0), "\n")
		if !strings.Contains(notes, "extended attributes: the filesystem of ") || !strings.Contains(notes, "not kept on 2 entries") {
			t.Errorf("privileged %v: notes %q, want the xattrs not kept on 2 entries", privileged, notes)
		}
		if strings.Contains(notes, "owners") != privileged || strings.Contains(notes, "permission bits") {
			t.Errorf("privileged %v: notes %q", privileged, notes)
		}
	}
}

// TestTooLarge checks the sizes of the filesystems that limit a file's
// and that a filesystem without one refuses no file (the refusal on FAT
// itself is copyengine's TestTooLargeForFAT).
func TestTooLarge(t *testing.T) {
	t.Parallel()
	for fs, want := range map[string]int64{"vfat": 1<<32 - 1, "fuse.fusefat": 1<<32 - 1, "exfat": 0, "ext4": 0, "": 0} {
		if got := destfs.MaxFileSize(fs); got != want {
			t.Errorf("MaxFileSize(%q) = %d, want %d", fs, got, want)
		}
	}
	var fi destfs.Info
	fi.Start(destfs.Config{RootPath: t.TempDir(), SkipWrite: func() bool { return true }})
	big := fileio.Stat{Mode: fileio.ModeRegular | 0o644, Size: 1 << 40}
	err := fi.TooLarge(&big)
	switch {
	case destfs.MaxFileSize(fi.FSType()) == 0 && err != nil:
		t.Errorf("%s: TooLarge of 1 TiB = %v, want nil", fi.FSName(), err)
	case destfs.MaxFileSize(fi.FSType()) > 0 && !errors.Is(err, refusal.ErrTooLarge):
		t.Errorf("%s: TooLarge of 1 TiB = %v, want an ErrTooLarge", fi.FSName(), err)
	}
}
