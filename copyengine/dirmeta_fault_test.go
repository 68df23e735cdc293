//go:build fcfault && linux

package copyengine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/treecmp"
)

// TestRerunLeavesUpToDateDirsAlone: a rerun that changes nothing in a
// directory applies nothing to it (no chmod, no chown, no times), and one
// whose source changed mode, or which a rerun writes into, still gets its
// source's mode and mtime.
func TestRerunLeavesUpToDateDirsAlone(t *testing.T) {
	t.Parallel()
	src, dst := stagedSource(t)
	writeFile(t, filepath.Join(src, "other", "g"), pattern(9, 10))
	opt := copyengine.Options{Sources: []string{src}, Dest: dst}
	if sum, err := runEngine(t, opt); err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	dirChmods := &fileio.Fault{Op: fileio.OpChmod, PathHas: dst}
	faults := fileio.NewFaultSet(dirChmods)
	if sum, err := runEngine(t, copyengine.WithFaults(opt, faults)); err != nil || sum.Copied != 0 {
		t.Fatalf("rerun: %v, copied %d (failures %v)", err, sum.Copied, sum.Failures)
	}
	if dirChmods.Calls() != 0 {
		t.Errorf("a rerun that changed nothing set modes %d times in the destination, want 0", dirChmods.Calls())
	}

	// A mode changed in the source, a file added to another directory.
	if err := os.Chmod(filepath.Join(src, "new", "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "other", "h"), pattern(10, 10))
	if err := os.Chtimes(filepath.Join(src, "other"), time.Unix(1e9, 5), time.Unix(1e9, 7)); err != nil {
		t.Fatal(err)
	}
	if sum, err := runEngine(t, copyengine.WithFaults(opt, faults)); err != nil || sum.Copied != 1 {
		t.Fatalf("rerun after changes: %v, copied %d, want 1 (failures %v)", err, sum.Copied, sum.Failures)
	}
	diffs, err := treecmp.Compare(src, dst, treecmp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if dirChmods.Calls() == 0 {
		t.Error("no mode was set after the source's changed")
	}
}
