//go:build fcfault && linux

package copyengine_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// cachedInodes returns the inodes the hash cache at db has entries for
// (whatever its keys look like).
func cachedInodes(t *testing.T, db string) map[uint64]bool {
	t.Helper()
	hc, err := hashcache.Open(db, hashcache.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	out := map[uint64]bool{}
	hc.Range("", func(_ string, e hashcache.Entry) bool {
		out[e.Ino] = true
		return true
	})
	return out
}

func inodeOf(t *testing.T, p string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestCacheNeverAheadOfFlush: the hash cache never stores a destination
// entry before the data it describes is flushed. A copy's entry is stored
// only after the flush that precedes its rename, so when that flush fails
// nothing is recorded (in every mode, --no-sync with --verify=cache
// included); a file found in place and read for its digest is recorded only
// after the run's final flush, so never with --no-sync.
func TestCacheNeverAheadOfFlush(t *testing.T) {
	t.Parallel()
	t.Run("copy/flush-fails", func(t *testing.T) {
		for _, noSync := range []bool{false, true} {
			base := scratchDir(t)
			src, dst, db := filepath.Join(base, "src"), filepath.Join(base, "dst"), filepath.Join(base, "hashes.db")
			writeFile(t, filepath.Join(src, "a"), pattern(1, 10000))
			writeFile(t, filepath.Join(src, "b"), pattern(2, 20000))
			faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpSync, Err: syscall.EIO})
			_, err := runCached(t, db, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Verify: copyengine.VerifyCache, NoSync: noSync}, faults))
			if err == nil {
				t.Errorf("no-sync=%v: the run exited 0 with no flush of its data possible", noSync)
			}
			cached := cachedInodes(t, db)
			for _, name := range []string{"a", "b"} {
				p := filepath.Join(dst, name)
				if _, serr := os.Lstat(p); serr == nil {
					t.Errorf("no-sync=%v: %s took its name without its data flushed", noSync, name)
					if cached[inodeOf(t, p)] {
						t.Errorf("no-sync=%v: the cache has an entry for %s, whose data was never flushed", noSync, name)
					}
				}
			}
		}
	})
	t.Run("found-in-place", func(t *testing.T) {
		for _, noSync := range []bool{true, false} {
			base := scratchDir(t)
			src, dst, db := filepath.Join(base, "src"), filepath.Join(base, "dst"), filepath.Join(base, "hashes.db")
			data := pattern(3, 30000)
			writeFile(t, filepath.Join(src, "a"), data)
			writeFile(t, filepath.Join(dst, "a"), data) // in place already, written by someone else
			when := time.Unix(1_600_000_000, 0)
			for _, p := range []string{filepath.Join(src, "a"), filepath.Join(dst, "a")} {
				if err := os.Chtimes(p, when, when); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(100 * time.Millisecond) // a source changed this recently is read again (transfer.Settling)
			sum, err := runCached(t, db, copyengine.Options{Sources: []string{src + "/"}, Dest: dst, NoSync: noSync})
			if err != nil || sum.Skipped != 1 {
				t.Fatalf("no-sync=%v: %v, %d skipped (want 1)", noSync, err, sum.Skipped)
			}
			has := cachedInodes(t, db)[inodeOf(t, filepath.Join(dst, "a"))]
			switch {
			case noSync && has:
				t.Errorf("with --no-sync the cache records a destination file it read but never flushed")
			case !noSync && !has:
				t.Errorf("after the final flush the cache does not record the destination file it read")
			}
		}
	})
}
