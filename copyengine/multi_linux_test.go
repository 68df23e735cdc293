//go:build linux

package copyengine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestRunAllOneDestinationFull: of two destinations, one is a small
// filesystem that fills up mid-run. That one stops with DestFullError,
// keeping what it placed (each complete) and no temporaries; the other
// goes on to the end, every file in place and verified.
func TestRunAllOneDestinationFull(t *testing.T) {
	t.Parallel()
	small := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 24 << 20})
	src := t.TempDir()
	for i := range 40 {
		writeFile(t, filepath.Join(src, fmt.Sprintf("clip%02d.mov", i)), pattern(int64(900+i), 1<<20))
	}
	settleSources()
	full, other := small.Path("card"), filepath.Join(t.TempDir(), "card")
	// Past the free-space check, as when another writer fills the drive.
	opts := destOpts(copyengine.Options{Sources: []string{src}, NoSpaceCheck: true}, full, other)
	// The other destination is the slower: it is still copying when the
	// full one stops, and must go on.
	opts[1].BwLimit = 24 << 20
	res := runAll(t, opts)
	var df *copyengine.DestFullError
	if !errors.As(res[0].Err, &df) {
		t.Errorf("the full destination: %v, want DestFullError", res[0].Err)
	}
	if res[1].Err != nil {
		t.Fatalf("the other destination: %v (failures %v)", res[1].Err, res[1].Summary.Failures)
	}
	if s := res[1].Summary; s.Copied != 40 || s.Verified != 40 {
		t.Errorf("the other destination: copied %d, verified %d; want 40 and 40", s.Copied, s.Verified)
	}
	sameTree(t, src, other)
	if n := finalFilesMatch(t, src, full); n == 0 || n == 40 {
		t.Errorf("%d files in place on the full destination, want some but not all", n)
	}
	noTemps(t, full)
	noTemps(t, other)
	if _, err := os.Stat(small.Path("card")); err != nil {
		t.Fatal(err)
	}
}
