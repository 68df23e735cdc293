package copyengine_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestPowerCutMove moves a tree from one filesystem to another and cuts
// the power to the destination's (xfs_io shutdown, the log lost) right
// after the run and at moments of it, most near its end, where the sources
// are removed; the source's filesystem keeps every removal. After the
// destination is mounted again every file must be complete on one side
// at least, and a rerun must finish the move. With --no-sync too: --move
// flushes before it removes anyway.
func TestPowerCutMove(t *testing.T) {
	needCut(t)
	if testing.Short() {
		t.Skip("skipping: power cuts take a while (-short)")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	a := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 128 << 20})
	b := loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20})
	src, dst := a.Path("DCIM"), b.Path("Photos")
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-sync=%v", noSync), func(t *testing.T) {
			took := moveCutTrial(t, b, src, dst, noSync, -1, r)
			for i := 0; i < 4; i++ {
				at := time.Duration((0.3 + 0.65*r.Float64()) * float64(took))
				moveCutTrial(t, b, src, dst, noSync, at, r)
			}
		})
	}
}

// moveCutTrial writes a fresh source, moves it to dst with the power of
// dst's filesystem cut at (after the run when at < 0), and checks.
func moveCutTrial(t *testing.T, b *loopfs.FS, src, dst string, noSync bool, at time.Duration, r *rand.Rand) time.Duration {
	t.Helper()
	noErr(t, os.RemoveAll(src))
	noErr(t, os.RemoveAll(dst))
	files := map[string][]byte{}
	for i := 0; i < 300; i++ {
		rel := filepath.Join(fmt.Sprintf("1%02d", i%7), fmt.Sprintf("IMG_%04d.JPG", i))
		files[rel] = pattern(r.Int63(), 1+r.Intn(24<<10))
		writeFile(t, filepath.Join(src, rel), files[rel])
	}
	settleSources()
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, Move: true, NoSync: noSync}
	took, runErr := runCutAt(t, opt, at, func() error { return b.Cut(false) })
	if at < 0 && runErr != nil {
		t.Fatalf("the run before the cut failed: %v", runErr)
	}
	noErr(t, b.Remount())
	what := fmt.Sprintf("no-sync=%v, cut at %v", noSync, at)
	if at < 0 {
		what = fmt.Sprintf("no-sync=%v, cut after exit", noSync)
	}
	inSrc, inDst := 0, 0
	for rel, want := range files {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err == nil && bytes.Equal(got, want) {
			inDst++
			continue
		}
		got, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %s is on neither side after the cut (source: %v)", what, rel, err)
			continue
		}
		inSrc++
	}
	t.Logf("%s: %d files left in the source, %d in DEST", what, inSrc, inDst)
	// The rerun finishes the move.
	opt.NoSync = false
	if _, err := runEngine(t, opt); err != nil {
		t.Fatalf("%s: the rerun failed: %v", what, err)
	}
	for rel, want := range files {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: after the rerun %s is not in DEST whole (%v)", what, rel, err)
		}
	}
	left := 0
	noErr(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != src {
			left++
		}
		return err
	}))
	if left != 0 {
		t.Errorf("%s: %d entries left in the source after the rerun", what, left)
	}
	return took
}
