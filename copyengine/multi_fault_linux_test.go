//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestRunAllOneDestinationMismatch: every write to one destination's
// temporaries is corrupted. That destination's files read back wrong and
// are not placed (ErrMismatch); the other destination, fed from the same
// reads of the source, is complete and verified.
func TestRunAllOneDestinationMismatch(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	files := genTree(t, src, 120, 11)
	settleSources()
	out := t.TempDir()
	bad, good := filepath.Join(out, "bad"), filepath.Join(out, "good")
	corrupt := &fileio.Fault{Op: fileio.OpWrite, PathHas: bad + "/", Corrupt: true}
	opts := destOpts(copyengine.Options{Sources: []string{src}}, bad, good)
	opts[0] = copyengine.WithFaults(opts[0], fileio.NewFaultSet(corrupt))
	opts[1].BwLimit = 8 << 20 // still copying when the other run ends

	res := runAll(t, opts)
	if corrupt.Calls() == 0 {
		t.Fatal("no write matched the fault: it did not reach the run")
	}
	if !errors.Is(res[0].Err, copyengine.ErrMismatch) {
		t.Errorf("the corrupted destination: %v, want ErrMismatch", res[0].Err)
	}
	var nonEmpty int64
	for _, b := range files {
		if len(b) > 0 {
			nonEmpty++
		}
	}
	// Only the empty files (nothing written) are in place there.
	if n := finalFilesMatch(t, src, bad); int64(n) != int64(len(files))-nonEmpty {
		t.Errorf("%d files placed on the corrupted destination, want only the %d empty ones", n, int64(len(files))-nonEmpty)
	}
	if res[1].Err != nil {
		t.Fatalf("the other destination: %v (failures %v)", res[1].Err, res[1].Summary.Failures)
	}
	if s := res[1].Summary; s.Verified < nonEmpty {
		t.Errorf("the other destination: verified %d, want at least the %d non-empty files", s.Verified, nonEmpty)
	}
	sameTree(t, src, good)
	noTemps(t, out)
}
