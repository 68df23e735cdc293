package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/mhl"
	"github.com/fastcopy/fastcopy/verify"
)

// TestMHLDigestsFromRun: DEST files rotted with their size and mtime kept,
// then a run with MHL and no cache. The generation lists every source file
// with the digest the run itself reported for it (the copy's, which its
// read-back matched, or the one both sides were read to hold), and that is
// the source's: a destination file whose stats match but whose bytes do
// not is not taken as unchanged on its stats, but copied again. The
// generation's actions follow the history: original, then verified.
func TestMHLDigestsFromRun(t *testing.T) {
	t.Parallel()
	src, dst, files := rotSource(t, 80)
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, MHL: true, MHLToolVersion: "test"}
	sum, err := runEngine(t, opt)
	if err != nil {
		t.Fatalf("first run: %v (failures %v)", err, sum.Failures)
	}
	if sum.MHLSeq != 1 || sum.MHLFiles != len(files) || sum.MHL == "" {
		t.Errorf("first run: generation %d of %d files at %q; want 1 of %d", sum.MHLSeq, sum.MHLFiles, sum.MHL, len(files))
	}
	checkGeneration(t, dst, 1, files, nil, mhl.Original)

	rotInPlace(t, dst, files, "b.bin", "sub/c.bin")
	var ev events
	opt.OnEvent = ev.record
	sum, err = runEngine(t, opt)
	if err != nil {
		t.Fatalf("second run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied < 2 {
		t.Errorf("copied %d files; want at least the two rotted ones", sum.Copied)
	}
	reported := map[string]verify.Sum{}
	for _, e := range ev.all {
		if e.Sum != (verify.Sum{}) {
			reported[e.Path] = e.Sum
		}
	}
	checkGeneration(t, dst, 2, files, reported, mhl.Verified)
}

// checkGeneration checks that generation seq of dir's history lists
// exactly files, each with its content's xxh128, with the action want,
// and (reported not nil) with the digest the run's events gave it.
func checkGeneration(t *testing.T, dir string, seq int, files map[string][]byte, reported map[string]verify.Sum, want mhl.Action) {
	t.Helper()
	h, err := mhl.Load(dir)
	if err != nil {
		t.Fatalf("reading the history: %v", err)
	}
	if n := len(h.Generations); n != seq {
		t.Fatalf("the history has %d generations, want %d", n, seq)
	}
	g := h.Generations[seq-1]
	if g.Process != mhl.Transfer || g.Creator.ToolVersion != "test" {
		t.Errorf("generation %d: process %q, tool version %q", seq, g.Process, g.Creator.ToolVersion)
	}
	listed := map[string]bool{}
	for _, f := range g.Files {
		listed[f.Path] = true
		data, ok := files[f.Path]
		if !ok {
			t.Errorf("generation %d lists %q, which the source does not have", seq, f.Path)
			continue
		}
		x, ok := f.Find("xxh128")
		switch {
		case !ok:
			t.Errorf("generation %d: %q has no xxh128", seq, f.Path)
		case x.Value != verify.Hex(verify.Bytes(data)):
			t.Errorf("generation %d lists %q as %s; its source is %s", seq, f.Path, x.Value, verify.Hex(verify.Bytes(data)))
		case x.Action != want:
			t.Errorf("generation %d: %q is %s, want %s", seq, f.Path, x.Action, want)
		}
		if reported != nil && len(data) > 0 {
			if r, ok := reported[f.Path]; !ok || verify.Hex(r) != x.Value {
				t.Errorf("generation %d: %q is %s; the run reported %s", seq, f.Path, x.Value, verify.Hex(r))
			}
		}
		if f.Size != int64(len(data)) {
			t.Errorf("generation %d: %q has size %d, want %d", seq, f.Path, f.Size, len(data))
		}
	}
	for rel := range files {
		if !listed[rel] {
			t.Errorf("generation %d does not list %q", seq, rel)
		}
	}
}

// TestMHLWriteFails: a copy that succeeds but whose history cannot be
// written (DEST/ascmhl is a file) is reported as an *MHLError, which is
// ErrMHL, with the files in place and the summary saying why.
func TestMHLWriteFails(t *testing.T) {
	t.Parallel()
	base := scratchDir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	writeFile(t, filepath.Join(src, "a"), []byte("a\n"))
	writeFile(t, filepath.Join(dst, "ascmhl"), []byte("not a folder\n"))
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, MHL: true})
	var me *copyengine.MHLError
	if !errors.Is(err, copyengine.ErrMHL) || !errors.As(err, &me) {
		t.Fatalf("run: %v; want an *MHLError", err)
	}
	if sum.Copied != 1 || sum.MHLError == "" || sum.MHL != "" {
		t.Errorf("copied %d, MHL %q, MHLError %q; want 1 copied and the error", sum.Copied, sum.MHL, sum.MHLError)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "a")); err != nil || string(b) != "a\n" {
		t.Errorf("DEST/a: %q, %v", b, err)
	}
}
