//go:build linux

package copyengine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestMHLDestFullSaysNotWritten: --mhl to two destinations, one a small
// filesystem that fills up mid-run. That one writes no history, as a run
// stopped early writes none, and its summary says so and why (MHLError);
// the other writes its generation.
func TestMHLDestFullSaysNotWritten(t *testing.T) {
	t.Parallel()
	small := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 24 << 20})
	src := t.TempDir()
	for i := range 40 {
		writeFile(t, filepath.Join(src, fmt.Sprintf("clip%02d.mov", i)), pattern(int64(700+i), 1<<20))
	}
	settleSources()
	full, other := small.Path("card"), filepath.Join(t.TempDir(), "card")
	opts := destOpts(copyengine.Options{Sources: []string{src}, NoSpaceCheck: true, MHL: true, MHLToolVersion: "test"}, full, other)
	res := runAll(t, opts)
	var df *copyengine.DestFullError
	if !errors.As(res[0].Err, &df) {
		t.Fatalf("the full destination: %v, want DestFullError", res[0].Err)
	}
	if s := res[0].Summary; s.MHL != "" || !strings.Contains(s.MHLError, "full") {
		t.Errorf("the full destination's summary: MHL %q, MHLError %q; want no generation and why", s.MHL, s.MHLError)
	}
	if _, err := os.Lstat(filepath.Join(full, "ascmhl")); !os.IsNotExist(err) {
		t.Errorf("the full destination has an ascmhl folder (%v); a run stopped early writes none", err)
	}
	if res[1].Err != nil {
		t.Fatalf("the other destination: %v (failures %v)", res[1].Err, res[1].Summary.Failures)
	}
	if s := res[1].Summary; s.MHLSeq != 1 || s.MHLFiles != 40 || s.MHLError != "" {
		t.Errorf("the other destination: generation %d of %d files, MHLError %q; want generation 1 of 40", s.MHLSeq, s.MHLFiles, s.MHLError)
	}
}
