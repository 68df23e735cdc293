//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	// One worker, at 1 MiB/s: a is copied first, z keeps the run going
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
	r := p.wait(t, 0, 0)
	if b, err := os.ReadFile(filepath.Join(src, "a")); err != nil || !bytes.Equal(b, []byte("version-2\n")) {
		t.Errorf("a rewritten on exFAT after its copy (mtime put back): exit %d, source not kept (%v):\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if r.code != 3 {
		t.Errorf("exit %d, want 3 (the source changed after its copy):\n%s%s", r.code, r.stdout, r.stderr)
	}
}
