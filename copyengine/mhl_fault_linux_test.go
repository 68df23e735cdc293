//go:build fcfault && linux

package copyengine_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestMHLDestRenamedBeforeHistory: once the copy is flushed, while the
// run looks at the files it lists, a writer moves DEST away and puts a
// directory of their own under its name. The generation does not go into
// that directory, whose files the run never copied nor read: the run
// reports an *MHLError, and the directory that took DEST's name has no
// history.
func TestMHLDestRenamedBeforeHistory(t *testing.T) {
	t.Parallel()
	base := scratchDir(t)
	src, dst, moved := filepath.Join(base, "src"), filepath.Join(base, "dst"), filepath.Join(base, "moved")
	writeFile(t, filepath.Join(src, "a"), []byte("a\n"))
	writeFile(t, filepath.Join(src, "sub", "b"), []byte("b\n"))
	var flushed atomic.Bool
	var once sync.Once
	swap := &fileio.Fault{Op: fileio.OpStat, PathIs: filepath.Join(dst, "a"), Then: func() {
		if !flushed.Load() {
			return
		}
		once.Do(func() {
			if err := os.Rename(dst, moved); err != nil {
				t.Error(err)
			}
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Error(err)
			}
		})
	}}
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, MHL: true,
		OnFlush: func(time.Time) {
			// Both files in place and durable: what follows is the history.
			_, err1 := os.Lstat(filepath.Join(dst, "a"))
			_, err2 := os.Lstat(filepath.Join(dst, "sub", "b"))
			flushed.Store(err1 == nil && err2 == nil)
		}}
	sum, err := runEngine(t, copyengine.WithFaults(opt, fileio.NewFaultSet(swap)))
	if _, serr := os.Stat(moved); serr != nil {
		t.Fatalf("DEST was not moved during the run: %v", serr)
	}
	if _, serr := os.Lstat(filepath.Join(dst, "ascmhl")); serr == nil {
		t.Errorf("the directory that took DEST's name got a history of files it does not hold")
	}
	if err == nil || sum.MHL != "" || sum.MHLError == "" {
		t.Errorf("run: %v, history %q (%q); want an error, no history and why", err, sum.MHL, sum.MHLError)
	}
	if b, rerr := os.ReadFile(filepath.Join(moved, "sub", "b")); rerr != nil || string(b) != "b\n" {
		t.Errorf("the copy: %q, %v", b, rerr)
	}
}
