package move

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// moveRun is one --move of the file "a" of a source directory, whose copy
// is "a" in a destination directory, and what the journal reported.
type moveRun struct {
	src, dst string
	failed   []error
	removed  []string
	cfg      Config
}

func newMoveRun(t *testing.T) *moveRun {
	r := &moveRun{src: t.TempDir(), dst: t.TempDir()}
	for _, d := range []string{r.src, r.dst} {
		if err := os.WriteFile(filepath.Join(d, "a"), []byte("content"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.cfg = Config{
		OpenDir:  fileio.OpenDir,
		Dest:     func() (string, *fileio.Dir) { return r.dst, nil },
		Dirs:     func() []Dir { return nil },
		Failures: func() []string { return nil },
		Stopped:  func() bool { return false },
		Failed:   func(rel string, err error) { r.failed = append(r.failed, err) },
		Removed:  func(rel string, dir bool) { r.removed = append(r.removed, rel) },
		Hashed:   func(int64) {},
	}
	return r
}

// note notes the source "a" as its state is now, then runs change.
func (r *moveRun) run(t *testing.T, change func()) *Journal {
	j := New(r.cfg)
	d, err := fileio.OpenDir(r.src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	j.Note(j.Source(d, "a", st, "a"), verify.Sum{})
	d.Close()
	if change != nil {
		change()
	}
	j.Finish()
	j.Close()
	return j
}

func (r *moveRun) srcThere(t *testing.T) bool {
	_, err := os.Lstat(filepath.Join(r.src, "a"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestFinishRemovesWhatWasCopied(t *testing.T) {
	r := newMoveRun(t)
	r.run(t, nil)
	if r.srcThere(t) || len(r.failed) != 0 || len(r.removed) != 1 {
		t.Fatalf("source there: %v, failed %v, removed %v; want it removed", r.srcThere(t), r.failed, r.removed)
	}
}

func TestFinishKeepsASourceChangedSince(t *testing.T) {
	r := newMoveRun(t)
	r.run(t, func() {
		if err := os.WriteFile(filepath.Join(r.src, "a"), []byte("other content"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if !r.srcThere(t) || len(r.failed) != 1 || !errors.Is(r.failed[0], errSourceChanged) || len(r.removed) != 0 {
		t.Fatalf("source there: %v, failed %v, removed %v; want it kept and failed as changed", r.srcThere(t), r.failed, r.removed)
	}
}

func TestFinishKeepsASourceThatIsItsOwnCopy(t *testing.T) {
	r := newMoveRun(t)
	r.dst = r.src // the source mounted inside DEST: its "copy" is itself
	r.run(t, nil)
	if !r.srcThere(t) || len(r.failed) != 1 || len(r.removed) != 0 {
		t.Fatalf("source there: %v, failed %v, removed %v; want it kept and failed", r.srcThere(t), r.failed, r.removed)
	}
}

func TestFinishKeepsASourceWhoseCopyIsGone(t *testing.T) {
	r := newMoveRun(t)
	r.run(t, func() {
		if err := os.Remove(filepath.Join(r.dst, "a")); err != nil {
			t.Fatal(err)
		}
	})
	if !r.srcThere(t) || len(r.failed) != 1 {
		t.Fatalf("source there: %v, failed %v; want it kept and failed", r.srcThere(t), r.failed)
	}
}

func TestDryFinishRemovesNothing(t *testing.T) {
	r := newMoveRun(t)
	r.cfg.SkipWrite = func() bool { return true }
	r.run(t, nil)
	if !r.srcThere(t) || len(r.failed) != 0 || len(r.removed) != 1 {
		t.Fatalf("source there: %v, failed %v, removed %v; want it reported and kept", r.srcThere(t), r.failed, r.removed)
	}
}

// TestProvenByContent: where the filesystem's stat cannot tell a file
// (no change time, no lasting inode number), the source is proven by the
// digest its copy was verified with, and kept without one.
func TestProvenByContent(t *testing.T) {
	r := newMoveRun(t)
	j := New(r.cfg)
	d, err := fileio.OpenDir(r.src)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Open("a", false)
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := verify.HashFile(f, st.Size, false, make([]byte, 1<<16))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pol := hashcache.Policy{}
	dst := &destLook{root: r.dst}
	defer dst.close()
	it := j.Source(d, "a", st, "a")
	for _, c := range []struct {
		sum  verify.Sum
		want bool
	}{{sum, true}, {verify.Sum{}, false}, {verify.Sum{Hi: sum.Hi ^ 1, Lo: sum.Lo}, false}} {
		it.sum = c.sum
		if err := j.proven(d, dst, it, &st, &pol); (err == nil) != c.want {
			t.Errorf("proven with the digest %v: %v, want removable %v", c.sum, err, c.want)
		}
	}
}

// TestNilJournal: a run without --move notes nothing and removes nothing.
func TestNilJournal(t *testing.T) {
	var j *Journal
	j.Note(j.Source(nil, "a", fileio.Stat{}, "a"), verify.Sum{})
	j.KeptInPlace()
	if r := j.Finish(); r.Kept() != 0 || j.Incomplete() != nil || j.Flush() != nil {
		t.Fatal("a nil journal did something")
	}
	j.Close()
}
