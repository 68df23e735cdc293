package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestSpaceCheckedFirst copies 12 MiB of files to an 8 MiB tmpfs: the run
// is refused before anything is written, with both numbers, and DEST, new
// or existing, is left as it was. Without the largest file the copy fits
// and is not refused; with it again, --no-space-check tries anyway.
func TestSpaceCheckedFirst(t *testing.T) {
	t.Parallel()
	fs := loopfs.Tmpfs(t, 8<<20)
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "a"), pattern(41, 5<<20))
	writeFile(t, filepath.Join(src, "sub", "b"), pattern(42, 4<<20+1))
	writeFile(t, filepath.Join(src, "sub", "c"), pattern(43, 3<<20+7))

	existing := fs.Path("existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{fs.Path("new"), existing} {
		sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
		var refusal *copyengine.RefusalError
		if !errors.As(err, &refusal) {
			t.Fatalf("run into %s: %v (copied %d, failed %d); want a refusal", dst, err, sum.Copied, sum.Failed)
		}
		t.Logf("refused: %v", err)
		if !strings.Contains(refusal.Msg, "needs at least 12.0 MiB, 8.0 MiB free on") || !strings.Contains(refusal.Hint, "--no-space-check") {
			t.Errorf("refusal %q (hint %q); want both numbers and the way round it", refusal.Msg, refusal.Hint)
		}
	}
	names, err := os.ReadDir(fs.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != "existing" {
		t.Errorf("the destination filesystem holds %v; want only the existing directory", names)
	}
	if names, _ := os.ReadDir(existing); len(names) != 0 {
		t.Errorf("the existing destination holds %v after the refusal; want nothing", names)
	}

	if err := os.Remove(filepath.Join(src, "a")); err != nil {
		t.Fatal(err)
	}
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: existing})
	if err != nil {
		t.Fatalf("a run that fits: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 2 {
		t.Errorf("a run that fits copied %d files, want 2", sum.Copied)
	}
	sameTree(t, src, existing)

	writeFile(t, filepath.Join(src, "a"), pattern(41, 5<<20))
	sum, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: fs.Path("new"), NoSpaceCheck: true})
	if err == nil || sum.Failed == 0 {
		t.Errorf("--no-space-check: %v, failed %d; want the copy tried and some files failing", err, sum.Failed)
	}
}
