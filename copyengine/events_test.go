//go:build unix

package copyengine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestUnchangedReportedOnce reruns over files whose data is unchanged and
// whose times, mode or both changed in the source, by each way a rerun
// decides that (size and mtime, the hash cache, --checksum without a
// cache). Each file gets one event: "metadata" where something was brought
// up to date, "skip" where nothing was, and metadata_only counts files.
func TestUnchangedReportedOnce(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	for i, n := range []string{"same", "mode", "times", "both"} {
		writeFile(t, filepath.Join(src, n), pattern(int64(i), 5000))
	}
	later := time.Date(2022, 6, 6, 1, 2, 3, 0, time.UTC)
	change := func(t *testing.T) {
		t.Helper()
		for _, n := range []string{"mode", "both"} {
			if err := os.Chmod(filepath.Join(src, n), 0o640); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range []string{"times", "both"} {
			if err := os.Chtimes(filepath.Join(src, n), later, later); err != nil {
				t.Fatal(err)
			}
		}
		// A source changed within the last moments is copied, not trusted
		// to be read whole (transfer.SettleWindow): let these changes settle.
		time.Sleep(200 * time.Millisecond)
	}
	reset := func(t *testing.T) {
		t.Helper()
		then := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, n := range []string{"same", "mode", "times", "both"} {
			if err := os.Chmod(filepath.Join(src, n), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(filepath.Join(src, n), then, then); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name     string
		cache    bool
		checksum bool
		want     map[string]copyengine.Action
	}{
		// Without a cache and without --checksum another mtime is another
		// file (the rsync rule): it is copied.
		{"size and mtime", false, false, map[string]copyengine.Action{"same": copyengine.ActSkip, "mode": copyengine.ActMeta, "times": copyengine.ActCopy, "both": copyengine.ActCopy}},
		{"cache", true, false, map[string]copyengine.Action{"same": copyengine.ActSkip, "mode": copyengine.ActMeta, "times": copyengine.ActMeta, "both": copyengine.ActMeta}},
		{"checksum", false, true, map[string]copyengine.Action{"same": copyengine.ActSkip, "mode": copyengine.ActMeta, "times": copyengine.ActMeta, "both": copyengine.ActMeta}},
	} {
		t.Run(c.name, func(t *testing.T) {
			reset(t)
			dst := filepath.Join(scr, "dst-"+c.name)
			db := filepath.Join(scr, "cache-"+c.name+".db")
			run := func(opt copyengine.Options) (copyengine.Summary, error) {
				if c.cache {
					return runCached(t, db, opt)
				}
				return runEngine(t, opt)
			}
			if sum, err := run(copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: "off"}); err != nil {
				t.Fatalf("first run: %v (failures %v)", err, sum.Failures)
			}
			change(t)
			var ev events
			sum, err := run(copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: "off", Checksum: c.checksum, OnEvent: ev.record})
			if err != nil {
				t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
			}
			got := map[string][]copyengine.Action{}
			for _, e := range ev.all {
				if e.Path != "" {
					got[e.Path] = append(got[e.Path], e.Action)
				}
			}
			meta := int64(0)
			for n, want := range c.want {
				if len(got[n]) != 1 || got[n][0] != want {
					t.Errorf("%s: events %v, want [%s]", n, got[n], want)
				}
				if want == copyengine.ActMeta {
					meta++
				}
			}
			if sum.MetaUpdated != meta {
				t.Errorf("metadata_only %d, want %d", sum.MetaUpdated, meta)
			}
			sameTree(t, src, dst)
		})
	}
}
