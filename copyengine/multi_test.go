package copyengine_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
)

// runAll runs RunAll with a timeout.
func runAll(t *testing.T, opts []copyengine.Options) []copyengine.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := copyengine.RunAll(ctx, opts)
	if err != nil {
		t.Fatalf("RunAll refused: %v", err)
	}
	return res
}

// destOpts makes one Options per destination, as --also does: the same
// sources and settings, each destination its own stats.
func destOpts(base copyengine.Options, dests ...string) []copyengine.Options {
	opts := make([]copyengine.Options, len(dests))
	for i, d := range dests {
		o := base
		o.Dest = d
		o.Stats = &copyengine.Stats{}
		opts[i] = o
	}
	return opts
}

// TestRunAllReadsOnce: a copy to two destinations puts a complete,
// verified copy in each, and the source's bytes are read once between
// them: what one run read, the other took from it.
func TestRunAllReadsOnce(t *testing.T) {
	t.Parallel()
	for _, verify := range []copyengine.VerifyMode{copyengine.VerifyOff, copyengine.VerifyDevice} {
		t.Run(string(verify), func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			files := genTree(t, src, 300, 7)
			var total int64
			for _, b := range files {
				total += int64(len(b))
			}
			settleSources()
			out := t.TempDir()
			a, b := filepath.Join(out, "a"), filepath.Join(out, "b")
			res := runAll(t, destOpts(copyengine.Options{Sources: []string{src}, Verify: verify}, a, b))
			var read, shared int64
			for i, r := range res {
				if r.Err != nil {
					t.Fatalf("destination %d: %v", i, r.Err)
				}
				if r.Summary.Copied != int64(len(files)) {
					t.Errorf("destination %d: copied %d, want %d", i, r.Summary.Copied, len(files))
				}
				read += r.Summary.BytesRead
				shared += r.Summary.BytesShared
			}
			sameTree(t, src, a)
			sameTree(t, src, b)
			noTemps(t, out)
			// Each source byte is read by one run and taken by the other.
			if shared != total {
				t.Errorf("%d source bytes handed from one run to the other, want all %d", shared, total)
			}
			if verify == copyengine.VerifyOff && read != total {
				t.Errorf("%d bytes read by the two runs together, want the source's %d once", read, total)
			}
		})
	}
}

// TestRunAllRefusesOverlap: destinations that are one directory, or one
// inside another, are refused before anything is written.
func TestRunAllRefusesOverlap(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "f"), []byte("x"))
	out := t.TempDir()
	for _, c := range [][2]string{
		{filepath.Join(out, "a"), filepath.Join(out, "a")},
		{filepath.Join(out, "a"), filepath.Join(out, "a", "b")},
		{filepath.Join(out, "a", "b"), filepath.Join(out, "a")},
		{filepath.Join(out, "a"), filepath.Join(out, "x", "..", "a")},
	} {
		res, err := copyengine.RunAll(context.Background(), destOpts(copyengine.Options{Sources: []string{src}}, c[0], c[1]))
		var refusal *copyengine.RefusalError
		if !errors.As(err, &refusal) || res != nil {
			t.Errorf("%v: %v, %v; want a refusal and no results", c, res, err)
		}
		if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) != 0 {
			t.Errorf("%v: refused, yet %v was made", c, m)
		}
	}
}
