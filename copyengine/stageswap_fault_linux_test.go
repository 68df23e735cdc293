//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestStagedDirExchanged: a writer of the destination exchanges the
// hidden temporary of a new directory (renameat2 RENAME_EXCHANGE) with a
// directory of their own, full of files of the source's names and a
// symlink to a file outside the destination: right after the run makes it
// (at its mkdir event), after its first file is created in it (its
// descriptor open already), or right before it is renamed into place. The
// writer's directory must never be published as the run's: the directory
// fails, named, none of its files is counted as copied or verified or
// recorded in the hash cache, the run fails as unverified (exit 4), and
// what ends up under its name is either nothing or reported as failed.
func TestStagedDirExchanged(t *testing.T) {
	t.Parallel()
	const n = 20
	for _, at := range []string{"mkdir", "create", "rename"} {
		t.Run(at, func(t *testing.T) {
			scr := scratchDir(t)
			src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
			writeFile(t, filepath.Join(src, "top.txt"), pattern(1, 100))
			for i := 1; i <= n; i++ {
				writeFile(t, filepath.Join(src, "sub", fmt.Sprintf("f%d", i)), []byte(fmt.Sprintf("good %d\n", i)))
				writeFile(t, filepath.Join(dst, ".evil", fmt.Sprintf("f%d", i)), []byte(fmt.Sprintf("EVIL %d\n", i)))
			}
			if err := os.Symlink("/etc/shadow", filepath.Join(dst, ".evil", "planted")); err != nil {
				t.Fatal(err)
			}
			tmp, evil := filepath.Join(dst, ".sub"+tempSuffix), filepath.Join(dst, ".evil")
			swapped := 0
			swap := func() {
				if swapped == 0 && exchange(tmp, evil) == nil {
					swapped++
				}
			}
			var ev events
			onEvent := ev.record
			var faults *fileio.FaultSet
			switch at {
			case "mkdir":
				onEvent = func(e copyengine.Event) {
					if e.Action == copyengine.ActMkdir && e.Path == "sub" {
						swap()
					}
					ev.record(e)
				}
			case "create":
				faults = fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpCreate, PathIs: filepath.Join(tmp, "f1"), Then: swap})
			case "rename":
				faults = fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRename, PathIs: filepath.Join(dst, "sub"), Then: swap})
			}
			db := filepath.Join(scr, "hashes.db")
			sum, err := runCached(t, db, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, OnEvent: onEvent}, faults))
			if swapped == 0 {
				t.Fatal("the temporary was never exchanged")
			}
			t.Logf("run: %v; failures: %v", err, ev.failures())
			_, failed := ev.failures()["sub"]
			if !failed {
				t.Errorf("sub was not reported as failed (run: %v, failures: %v)", err, ev.failures())
			}
			if !errors.Is(err, copyengine.ErrMismatch) {
				t.Errorf("run: %v (want %v)", err, copyengine.ErrMismatch)
			}
			if _, lerr := os.Lstat(filepath.Join(dst, "sub", "planted")); lerr == nil && !failed {
				t.Errorf("the writer's directory was published as sub")
			}
			if got, rerr := os.ReadFile(filepath.Join(dst, "sub", "f1")); rerr == nil && strings.HasPrefix(string(got), "EVIL") && !failed {
				t.Errorf("sub/f1 in the destination holds %q", got)
			}
			if sum.Copied != 1 || sum.Verified != 1 {
				t.Errorf("%d files counted as copied and %d as verified, want 1 and 1 (top.txt alone)", sum.Copied, sum.Verified)
			}
			ev.mu.Lock()
			for _, e := range ev.all {
				if strings.HasPrefix(e.Path, "sub/") && e.Action != copyengine.ActFail {
					t.Errorf("event %s %s for a file of the exchanged directory", e.Action, e.Path)
				}
			}
			ev.mu.Unlock()
			hc, err := hashcache.Open(db, hashcache.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Close()
			hc.Range("", func(p string, _ hashcache.Entry) bool {
				if strings.HasPrefix(p, filepath.Join(dst, "sub")+"/") {
					t.Errorf("the hash cache records %s", p)
				}
				return true
			})
		})
	}
}
