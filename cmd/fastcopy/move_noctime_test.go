//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestMoveSourceRewrittenNoCtime is TestMoveSourceRewrittenMtimeRestored
// with the source on exFAT (through FUSE), whose change time fastcopy does
// not trust: a rewrite of the same size whose mtime is put back after its
// copy took its name must be caught by reading the source again, and the
// source kept (exit 3).
func TestMoveSourceRewrittenNoCtime(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.ExfatFUSE, Size: 64 << 20})
	src, dst := filepath.Join(fs.Dir, "src"), filepath.Join(t.TempDir(), "dst")
	r := rewriteDuringMove(t, bin, src, dst)
	if b, err := os.ReadFile(filepath.Join(src, "a")); err != nil || !bytes.Equal(b, []byte("version-2\n")) {
		t.Errorf("a rewritten on exFAT after its copy (mtime put back): exit %d, source not kept (%v):\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if r.code != 3 {
		t.Errorf("exit %d, want 3 (the source changed after its copy):\n%s%s", r.code, r.stdout, r.stderr)
	}
}
