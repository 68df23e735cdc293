//go:build fcfault && linux

package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestSwappedAfterReadBack: a writer in DEST swaps a temporary for a file
// of their own after it was read back, just before it takes its final name.
// The file must fail as unverified (exit 4, named), the writer's file must
// not be recorded in the hash cache as the verified copy, and the others
// must be in place.
func TestSwappedAfterReadBack(t *testing.T) {
	t.Parallel()
	for _, mode := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyCache} {
		t.Run(string(mode), func(t *testing.T) {
			base := scratchDir(t)
			src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
			want := map[string][]byte{"a": pattern(1, 5000), "victim": pattern(2, 70000), "z": pattern(3, 9000)}
			for name, data := range want {
				writeFile(t, filepath.Join(src, name), data)
			}
			theirs := bytes.Repeat([]byte("not the source "), 70000/15)
			evil := filepath.Join(dst, "evil")
			writeFile(t, evil, theirs)
			tmp := filepath.Join(dst, ".victim"+tempSuffix)
			var swapErr error
			// Right before the temporary is renamed onto its name, after
			// its read-back and its times.
			faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRename, PathIs: filepath.Join(dst, "victim"), Nth: 1, Then: func() {
				swapErr = exchange(tmp, evil)
			}})
			db := filepath.Join(base, "hashes.db")
			var ev events
			sum, err := runCached(t, db, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Verify: mode, OnEvent: ev.record}, faults))
			if swapErr != nil {
				t.Fatalf("the swap did not happen: %v", swapErr)
			}
			if !errors.Is(err, copyengine.ErrMismatch) {
				t.Errorf("run: %v (want %v): the swapped file was published as verified", err, copyengine.ErrMismatch)
			}
			if fe, ok := ev.failures()["victim"]; !ok {
				t.Errorf("victim was not reported as failed (failures: %v, %d copied)", ev.failures(), sum.Copied)
			} else if !strings.Contains(fe.Error(), "replaced") {
				t.Errorf("victim failed with %v", fe)
			}
			for _, name := range []string{"a", "z"} {
				if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || !bytes.Equal(got, want[name]) {
					t.Errorf("%s not in place: %v", name, err)
				}
			}
			// Nothing in the cache may describe the writer's file, now under
			// the final name (whatever the keys look like).
			var placed unix.Stat_t
			if err := unix.Lstat(filepath.Join(dst, "victim"), &placed); err != nil {
				t.Fatal(err)
			}
			hc, err := hashcache.Open(db, hashcache.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Close()
			hc.Range("", func(p string, e hashcache.Entry) bool {
				if e.Ino == placed.Ino {
					t.Errorf("the hash cache vouches for %s (ino %d), the writer's file, which the run did not verify", p, e.Ino)
				}
				return true
			})
		})
	}
}
