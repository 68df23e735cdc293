//go:build fcfault && linux

package copyengine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestTimesFixWriteBeforeUtimes: a destination file is written by someone
// else after fixTimes has checked its stat and just before it sets the
// times, which replace the write's mtime, so that no stat could tell. The
// write must still keep the file from being recorded in the cache with the
// digest of its old content.
func TestTimesFixWriteBeforeUtimes(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst, db := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "hashes.db")
	writeFile(t, filepath.Join(src, "b"), pattern(23, 8192))
	old := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	noErr(t, os.Chtimes(filepath.Join(src, "b"), old, old))
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1}
	if _, err := runCached(t, db, opt); err != nil {
		t.Fatal(err)
	}
	newTime := time.Date(2022, 6, 6, 0, 0, 0, 0, time.UTC)
	noErr(t, os.Chtimes(filepath.Join(src, "b"), newTime, newTime))
	settleSources()
	f := &fileio.Fault{Op: fileio.OpUtimes, PathIs: filepath.Join(dst, "b"), Nth: 1, Then: func() {
		w, err := os.OpenFile(filepath.Join(dst, "b"), os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := w.WriteAt(pattern(99, 8192), 0); err != nil {
			t.Error(err)
		}
		w.Close()
	}}
	faults := fileio.NewFaultSet(f)
	_, err := runCached(t, db, copyengine.WithFaults(opt, faults))
	if err != nil {
		t.Logf("run with the write: %v", err)
	}
	if f.Calls() == 0 {
		t.Fatal("b's times were not set through a descriptor, so nothing was written in the window")
	}
	sum, err := runCached(t, db, opt)
	if err != nil {
		t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
	}
	sameTree(t, src, dst)
}
