package copyengine_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestTreeConcurrent copies a tree of a few thousand files with eight
// workers (symlinks, hard links, empty files and empty directories among
// them), then reruns over the copy: once unchanged, once after changes on
// both sides. CI runs it under -race: it is the race detector's view of the
// whole pipeline, walkers, workers and committer.
func TestTreeConcurrent(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	files := genTree(t, src, 3000, 11)
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	const links, symlinks = 30, 40
	for i := 0; i < links; i++ {
		// A second name for a file, in another directory.
		target := rels[i*97%len(rels)]
		other := filepath.Dir(rels[(i*97+50)%len(rels)])
		if err := os.Link(filepath.Join(src, target), filepath.Join(src, other, "hardlink"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < symlinks; i++ {
		target := "dangling"
		if i%4 != 0 {
			target = filepath.Base(rels[i*61%len(rels)])
		}
		if err := os.Symlink(target, filepath.Join(src, filepath.Dir(rels[i*61%len(rels)]), "symlink"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		if err := os.MkdirAll(filepath.Join(src, "empty"+strconv.Itoa(i), "below"), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	dst := filepath.Join(scr, "dst")
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 8}
	sum, err := runEngine(t, opt)
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != int64(len(files)) || sum.Linked != links || sum.Symlinks != symlinks || sum.Verified != sum.Copied {
		t.Errorf("copied %d, linked %d, symlinks %d, verified %d; want %d, %d, %d, all copies verified",
			sum.Copied, sum.Linked, sum.Symlinks, sum.Verified, len(files), links, symlinks)
	}
	sameTree(t, src, dst)
	for i := 0; i < links; i++ {
		target := rels[i*97%len(rels)]
		other := filepath.Join(filepath.Dir(rels[(i*97+50)%len(rels)]), "hardlink"+strconv.Itoa(i))
		a, err1 := os.Stat(filepath.Join(dst, target))
		b, err2 := os.Stat(filepath.Join(dst, other))
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			t.Errorf("%s and %s are not one file in the copy (%v, %v)", target, other, err1, err2)
		}
	}

	// Unchanged: everything is skipped.
	sum, err = runEngine(t, opt)
	if err != nil {
		t.Fatalf("second run: %v (failures %v)", err, sum.Failures)
	}
	if want := int64(len(files) + links + symlinks); sum.Copied != 0 || sum.Skipped != want {
		t.Errorf("second run copied %d, skipped %d; want 0 and %d", sum.Copied, sum.Skipped, want)
	}

	// Ten sources rewritten, ten copies removed: twenty files to copy. (A
	// removed copy of a hard-linked file could come back as a link to its
	// other name, so those are left alone.)
	linked := map[string]bool{}
	for i := 0; i < links; i++ {
		linked[rels[i*97%len(rels)]] = true
	}
	for i, n := 0, 0; n < 10; i++ {
		if rel := rels[i*13+200]; !linked[rel] {
			if err := os.Remove(filepath.Join(dst, rel)); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	for i, n := 0, 0; n < 10; i++ {
		if rel := rels[i*13+5]; !linked[rel] {
			writeFile(t, filepath.Join(src, rel), pattern(int64(9000+i), 777+i))
			n++
		}
	}
	sum, err = runEngine(t, opt)
	if err != nil {
		t.Fatalf("third run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 20 {
		t.Errorf("third run copied %d files, want 20", sum.Copied)
	}
	sameTree(t, src, dst)
	noTemps(t, dst)
}
