//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBagPercentNamesVerify: fastcopy --bag writes a name's '%' as it is
// (as bagit-python writes and reads it), and fastcopy verify, which also
// reads RFC 8493's "%25", must find such a file under either spelling.
// Before, a payload file named x%25y was reported missing as x%y and
// extra as itself: fastcopy's own bag failed fastcopy's check.
func TestBagPercentNamesVerify(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, bag := filepath.Join(work, "src"), filepath.Join(work, "bag")
	for _, n := range []string{"x%25y", "100%.txt", "a%0Ab"} {
		writeTestFile(t, filepath.Join(src, n), "content of "+n)
	}
	if r := runBinary(t, bin, 0, 0, "--no-cache", "--bag", src, bag); r.code != 0 {
		t.Fatalf("--bag: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runBinary(t, bin, 0, 0, "verify", "--no-cache", bag)
	if r.code != 0 || !strings.Contains(r.stdout, "identical") {
		t.Fatalf("verify of fastcopy's own bag: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A changed byte in that file is still found: the spelling found the
	// file, and its digest is checked.
	writeTestFile(t, filepath.Join(bag, "data", "x%25y"), "content of x%25Y")
	if r := runBinary(t, bin, 0, 0, "verify", "--no-cache", bag); r.code != 4 || !strings.Contains(r.stdout, "x%25y") {
		t.Errorf("verify after a changed byte in x%%25y: exit %d, want 4 naming it\n%s%s", r.code, r.stdout, r.stderr)
	}
}
