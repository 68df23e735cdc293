package copyengine_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestLinksWithoutHardLinks copies a source file with three names to
// exFAT, which has no hard links: each further name becomes a verified
// copy of its own, named in the summary and by its event, instead of a
// failed link(2) on every run. The rerun finds all three in place.
func TestLinksWithoutHardLinks(t *testing.T) {
	fs := mountExfat(t)
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "hard1"), pattern(31, 100000))
	writeFile(t, filepath.Join(src, "other"), pattern(32, 5000))
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sub/hard2", "hard3"} {
		if err := os.Link(filepath.Join(src, "hard1"), filepath.Join(src, n)); err != nil {
			t.Fatal(err)
		}
	}
	dst := fs.path("dst")
	var ev events
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record}
	sum, err := runEngine(t, opt)
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 4 || sum.LinkCopies != 2 || sum.Linked != 0 || sum.Failed != 0 {
		t.Errorf("copied %d, %d hard links as copies, %d linked, %d failed; want 4, 2, 0, 0", sum.Copied, sum.LinkCopies, sum.Linked, sum.Failed)
	}
	var copies []string
	for _, e := range ev.all {
		if e.Action == copyengine.ActLinkCopy {
			copies = append(copies, e.Path)
		}
	}
	slices.Sort(copies)
	paths := slices.Sorted(slices.Values(sum.LinkCopyPaths))
	if len(copies) != 2 || !slices.Equal(copies, paths) {
		t.Errorf("link-copy events for %q, summary names %q; want the same two of hard1, hard3, sub/hard2", copies, paths)
	}
	if len(sum.NotKept) != 1 {
		t.Errorf("not kept: %q; want one note on hard links", sum.NotKept)
	}
	t.Logf("not kept: %q", sum.NotKept)
	sameTree(t, src, dst)
	noTemps(t, dst)

	fs.remount()
	sum, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
	if err != nil {
		t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 0 || sum.Skipped != 4 {
		t.Errorf("rerun: copied %d, skipped %d; want 0, 4", sum.Copied, sum.Skipped)
	}
	noTemps(t, dst)
}
