//go:build fcfault && linux

package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// sameContentTree writes files of one content and one set of metadata
// under src.
func sameContentTree(t *testing.T, src string, data []byte, names ...string) {
	t.Helper()
	for _, n := range names {
		writeFile(t, filepath.Join(src, n), data)
		setTimes(t, filepath.Join(src, n), oldTime)
	}
	settleSources()
}

// TestDedupReadBack: a file placed by sharing another's data is read back
// like any other before it takes its name. The read-back of a duplicate
// that fails fails that file alone; the live counters show every
// duplicate's bytes read back; a copy whose first write was corrupted is
// copied again and then shared.
func TestDedupReadBack(t *testing.T) {
	t.Parallel()
	t.Run("duplicate read-back fails", func(t *testing.T) {
		base := ext4Dir(t)
		src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
		db := filepath.Join(t.TempDir(), "hashes.db")
		data := pattern(500, 90000)
		sameContentTree(t, src, data, "orig")
		if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 1 {
			t.Fatalf("first run: %v, copied %d", err, sum.Copied)
		}
		// Both new files duplicate orig, in place from the first run.
		sameContentTree(t, src, data, "dupB", "dupC")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathHas: filepath.Join(dst, ".dupB"), Err: syscall.EIO})
		var st copyengine.Stats
		sum, err := runCached(t, db, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Stats: &st}, faults))
		if err == nil || sum.Failed != 1 || len(sum.Failures) != 1 || sum.Failures[0].Path != "dupB" {
			t.Fatalf("Run: %v, failures %v; want dupB alone to fail", err, sum.Failures)
		}
		if msg := sum.Failures[0].Err; !strings.Contains(msg, "input/output error") {
			t.Errorf("dupB failed with %q, want the read-back's error", msg)
		}
		if _, err := os.Lstat(filepath.Join(dst, "dupB")); err == nil {
			t.Error("dupB, whose read-back failed, is in place")
		}
		// dupC is in place, read back. (It is copied: removing dupB's link
		// moved orig's ctime, so orig no longer matches what was verified.)
		if sum.Copied+sum.Deduped != 1 || sum.Verified != 1 || st.BytesVerified.Load() != int64(len(data)) {
			t.Errorf("copied %d, deduplicated %d, verified %d (%d bytes); want dupC placed and read back",
				sum.Copied, sum.Deduped, sum.Verified, st.BytesVerified.Load())
		}
		if got, err := os.ReadFile(filepath.Join(dst, "dupC")); err != nil || !bytes.Equal(got, data) {
			t.Errorf("dupC does not hold its source's bytes (%v)", err)
		}
		if a := lstatT(t, filepath.Join(dst, "orig")); uint64(a.Nlink) != 1+uint64(sum.Deduped) {
			t.Errorf("orig has %d links; dupB's was left behind", a.Nlink)
		}
		noTemps(t, dst)
	})

	t.Run("first copy corrupted once", func(t *testing.T) {
		base := ext4Dir(t)
		src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
		data := pattern(501, 300000)
		names := []string{"a", "b", "c", "d"}
		sameContentTree(t, src, data, names...)
		// The first write to any temporary of the destination is corrupted:
		// whichever file is written first reads back wrong and is copied
		// again; the others then share the good copy.
		corrupt := &fileio.Fault{Op: fileio.OpWrite, PathHas: dst + "/.", Nth: 1, Corrupt: true}
		var st copyengine.Stats
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Stats: &st}, fileio.NewFaultSet(corrupt)))
		if err != nil {
			t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
		}
		if corrupt.Calls() == 0 {
			t.Fatal("no write to a temporary matched the fault: it did not reach the run")
		}
		if sum.Copied != 1 || sum.Deduped != 3 || sum.Mismatches != 0 || sum.Verified != 4 {
			t.Errorf("copied %d, deduplicated %d, mismatches %d, verified %d; want 1 written, 3 shared, all 4 verified",
				sum.Copied, sum.Deduped, sum.Mismatches, sum.Verified)
		}
		// Only read-backs that matched count, the corrupted write's not.
		if got := st.BytesVerified.Load(); got != 4*int64(len(data)) {
			t.Errorf("%d bytes read back and matched; want the %d of all four files", got, 4*len(data))
		}
		for _, n := range names {
			got, err := os.ReadFile(filepath.Join(dst, n))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s does not hold its source's bytes (%v)", n, err)
			}
		}
	})
}

// TestDedupLinkEMLINK: a hard link refused with EMLINK (injected: ext4's
// limit is 65000) makes that file a copy of its own, and the run says why;
// the other duplicates are linked.
func TestDedupLinkEMLINK(t *testing.T) {
	t.Parallel()
	base := ext4Dir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	data := pattern(502, 20000)
	names := []string{"a", "b", "c", "d"}
	sameContentTree(t, src, data, names...)
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpLink, Nth: 1, Err: syscall.EMLINK})
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: dedup.Hardlink}, faults))
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 2 || sum.DedupLinked != 2 || sum.Failed != 0 {
		t.Errorf("copied %d, hard-linked %d, failed %d; want the file refused a link copied", sum.Copied, sum.DedupLinked, sum.Failed)
	}
	if !strings.Contains(sum.DedupNote, "too many links") {
		t.Errorf("dedup note %q; want it to say why a link was not made", sum.DedupNote)
	}
	links := map[uint64]int{}
	for _, n := range names {
		links[lstatT(t, filepath.Join(dst, n)).Ino]++
	}
	if len(links) != 2 {
		t.Errorf("the four files are %d inodes, want 2: %v", len(links), links)
	}
	sameTree(t, src, dst)
}
