//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeleteSourceInsideDestBindMount mirrors into DEST a source that is a
// directory of DEST reached through a bind mount of DEST: by its path it
// is outside, by identity inside, and --delete would remove it (it is an
// entry of DEST the mirror lacks). Refused, exit 2, nothing removed.
func TestDeleteSourceInsideDestBindMount(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	dst, bind := filepath.Join(work, "dst"), filepath.Join(work, "bind")
	writeTestFile(t, filepath.Join(dst, "sub", "f"), "only copy")
	writeTestFile(t, filepath.Join(dst, "old"), "old")
	bindMount(t, dst, bind)
	r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", filepath.Join(bind, "sub"), dst)
	if r.code != 2 || !strings.Contains(r.stderr, "inside the destination") {
		t.Errorf("--delete %s %s (the source inside DEST through a bind mount): exit %d, want 2 naming it inside the destination:\n%s%s", filepath.Join(bind, "sub"), dst, r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{filepath.Join(dst, "sub", "f"), filepath.Join(dst, "old")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
