//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestOverlapFoldRespelled names one directory of an exFAT drive in two
// spellings, dst and DST. exfat-fuse gives each spelling an inode number
// of its own, so identity alone cannot tell they are one place; before
// the fold rule the copy of DST into dst/sub/copy was not refused and
// copied its own output into itself without end, and a --backup-dir
// spelled DST/old was taken for a place outside DEST that --delete then
// met as an extra. Each is refused, exit 2, as the same spelling is, and
// nothing is written.
func TestOverlapFoldRespelled(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	dst := fs.Path("dst")
	writeTestFile(t, filepath.Join(dst, "sub", "f"), "f")
	writeTestFile(t, filepath.Join(dst, "g"), "g")
	if a, err1 := os.Stat(dst); err1 == nil {
		if b, err2 := os.Stat(fs.Path("DST")); err2 != nil {
			t.Fatalf("exFAT does not find dst as DST: %v", err2)
		} else if sameIno(a, b) {
			t.Logf("exfat-fuse gave both spellings one inode number here: identity alone would do")
		}
	}
	count := func() int {
		n := 0
		filepath.Walk(fs.Path(), func(string, os.FileInfo, error) error { n++; return nil })
		return n
	}
	before := count()
	// Stopped after a minute if still running: before the rule it never
	// ended on its own.
	r := runBinary(t, bin, time.Minute, syscall.SIGTERM, "--no-cache", fs.Path("DST"), filepath.Join(dst, "sub", "copy"))
	overlapRefused(t, "DST into dst/sub/copy", r, "is inside the source")
	if n := count(); n != before {
		t.Errorf("DST into dst/sub/copy: %d entries on the drive, %d before: it wrote", n, before)
	}
	src := filepath.Join(t.TempDir(), "src")
	writeTestFile(t, filepath.Join(src, "f"), "new f")
	r = runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--backup-dir", fs.Path("DST", "old"), src, dst)
	overlapRefused(t, "--backup-dir DST/old for DEST dst", r, "is inside the destination")
	overlapExists(t, "--backup-dir DST/old", filepath.Join(dst, "g"), filepath.Join(dst, "sub", "f"))
	if _, err := os.Lstat(filepath.Join(dst, "old")); err == nil {
		t.Errorf("--backup-dir DST/old: dst/old was made")
	}
	// A destination named in the other spelling is the same place too:
	// dst/sub is a source inside DEST, which --delete would mirror into
	// itself.
	r = runBinary(t, bin, 0, 0, "--no-cache", "--delete", filepath.Join(dst, "sub"), fs.Path("DST"))
	overlapRefused(t, "--delete dst/sub into DST", r, "is inside the destination")
	overlapExists(t, "--delete dst/sub into DST", filepath.Join(dst, "g"))
	if t.Failed() && !strings.Contains(r.stderr, "hint") {
		t.Logf("last stderr: %s", r.stderr)
	}
}

// sameIno reports whether two stats name one inode of one device.
func sameIno(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
