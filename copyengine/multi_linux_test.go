//go:build linux

package copyengine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestRunAllOneDestinationFull: of two destinations, one is a small
// filesystem that fills up mid-run. That one stops with DestFullError,
// keeping what it placed (each complete) and no temporaries; the other
// goes on to the end, every file in place and verified.
func TestRunAllOneDestinationFull(t *testing.T) {
	t.Parallel()
	small := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 24 << 20})
	src := t.TempDir()
	for i := range 40 {
		writeFile(t, filepath.Join(src, fmt.Sprintf("clip%02d.mov", i)), pattern(int64(900+i), 1<<20))
	}
	settleSources()
	full, other := small.Path("card"), filepath.Join(t.TempDir(), "card")
	// Past the free-space check, as when another writer fills the drive.
	opts := destOpts(copyengine.Options{Sources: []string{src}, NoSpaceCheck: true}, full, other)
	// The other destination is the slower: it is still copying when the
	// full one stops, and must go on.
	opts[1].BwLimit = 24 << 20
	res := runAll(t, opts)
	var df *copyengine.DestFullError
	if !errors.As(res[0].Err, &df) {
		t.Errorf("the full destination: %v, want DestFullError", res[0].Err)
	}
	if res[1].Err != nil {
		t.Fatalf("the other destination: %v (failures %v)", res[1].Err, res[1].Summary.Failures)
	}
	if s := res[1].Summary; s.Copied != 40 || s.Verified != 40 {
		t.Errorf("the other destination: copied %d, verified %d; want 40 and 40", s.Copied, s.Verified)
	}
	sameTree(t, src, other)
	if n := finalFilesMatch(t, src, full); n == 0 || n == 40 {
		t.Errorf("%d files in place on the full destination, want some but not all", n)
	}
	noTemps(t, full)
	noTemps(t, other)
	if _, err := os.Stat(small.Path("card")); err != nil {
		t.Fatal(err)
	}
}

// TestRunAllRefusesOverlapByIdentity: two destinations whose names differ
// but that are one directory, or one inside the other: another spelling on
// a case-insensitive exFAT drive, a bind mount. They are refused before
// anything is written, as the same name twice is, not left to find each
// other's lock once running.
func TestRunAllRefusesOverlapByIdentity(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "f"), []byte("x"))
	backup := fs.Path("Backup")
	if err := os.Mkdir(backup, 0o755); err != nil {
		t.Fatal(err)
	}
	bind := filepath.Join(t.TempDir(), "bind")
	if err := os.Mkdir(bind, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", backup, bind).CombinedOutput(); err != nil {
		t.Skipf("mount --bind: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", bind).Run() })
	for _, c := range [][2]string{
		{backup, fs.Path("backup")},
		{fs.Path("backup", "day1"), backup},
		{backup, bind},
		{bind, filepath.Join(backup, "day1")},
	} {
		res, err := copyengine.RunAll(context.Background(), destOpts(copyengine.Options{Sources: []string{src}}, c[0], c[1]))
		var refusal *copyengine.RefusalError
		if !errors.As(err, &refusal) || res != nil {
			t.Errorf("%v: %v; want a refusal and no results", c, err)
			for i, r := range res {
				t.Logf("destination %s: %v", c[i], r.Err)
			}
		}
		if m, _ := filepath.Glob(filepath.Join(backup, "*")); len(m) != 0 {
			t.Errorf("%v: %v was made", c, m)
			for _, p := range m {
				_ = os.RemoveAll(p)
			}
		}
	}
}
