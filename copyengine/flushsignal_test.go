//go:build unix

package copyengine_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/verify"
)

// The events of files placed carry their size, digest and time, and
// OnFlush says when what was reported is durable: after each commit batch
// (a run of more files than a batch holds hears of a flush before its last
// file is placed) and at the end, after every file placed. With --no-sync
// nothing is waited for and OnFlush is never called.
func TestOnFlushAndEventFacts(t *testing.T) {
	src := t.TempDir()
	const n = 2500 // more than a commit batch (2048 files)
	files := map[string][]byte{}
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("d%d/f%04d", i%7, i)
		files[rel] = pattern(int64(i), 100+i%300)
		writeFile(t, filepath.Join(src, rel), files[rel])
	}
	settleSources()

	var mu sync.Mutex
	var evs []copyengine.Event
	var flushes []time.Time
	opt := func(dst string, noSync bool) copyengine.Options {
		return copyengine.Options{
			Sources: []string{src}, Dest: dst, NoSync: noSync, Dedup: "off",
			OnEvent: func(e copyengine.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() },
			OnFlush: func(at time.Time) { mu.Lock(); flushes = append(flushes, at); mu.Unlock() },
		}
	}
	if _, err := runEngine(t, opt(filepath.Join(t.TempDir(), "dst"), false)); err != nil {
		t.Fatal(err)
	}
	placed := 0
	var last time.Time
	for _, e := range evs {
		if e.Action != copyengine.ActCopy {
			continue
		}
		placed++
		data := files[e.Path]
		if e.Size != int64(len(data)) || e.Sum != verify.Bytes(data) || e.Time.IsZero() {
			t.Errorf("%s: size %d, sum %s, time %v; want %d, %s and a time", e.Path, e.Size, verify.Hex(e.Sum), e.Time, len(data), verify.Hex(verify.Bytes(data)))
		}
		if e.Time.After(last) {
			last = e.Time
		}
	}
	if placed != n {
		t.Fatalf("%d files reported copied, want %d", placed, n)
	}
	if len(flushes) < 2 {
		t.Fatalf("OnFlush called %d times; want once after a batch and once at the end", len(flushes))
	}
	if !flushes[0].Before(last) {
		t.Errorf("the first flush (%v) came after the last file was placed (%v): nothing was flushed per batch", flushes[0], last)
	}
	if end := flushes[len(flushes)-1]; !end.After(last) {
		t.Errorf("the last flush (%v) is not after the last file placed (%v)", end, last)
	}
	for i := 1; i < len(flushes); i++ {
		if flushes[i].Before(flushes[i-1]) {
			t.Errorf("OnFlush went back in time: %v after %v", flushes[i], flushes[i-1])
		}
	}

	evs, flushes = nil, nil
	if _, err := runEngine(t, opt(filepath.Join(t.TempDir(), "dst"), true)); err != nil {
		t.Fatal(err)
	}
	if len(flushes) != 0 {
		t.Errorf("OnFlush called %d times with --no-sync", len(flushes))
	}
}

// The removals --delete, --backup-dir and --move make after the final
// flush are flushed in turn, and OnFlush is told: its last call comes
// after every delete, backup and remove-source event.
func TestOnFlushAfterRemovals(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	writeFile(t, filepath.Join(src, "sub", "a"), []byte("a"))
	writeFile(t, filepath.Join(dst, "x"), []byte("x"))
	writeFile(t, filepath.Join(dst, "old", "y"), []byte("y"))
	settleSources()

	var mu sync.Mutex
	var last time.Time
	removals := 0
	var flushes []time.Time
	opt := copyengine.Options{
		Sources: []string{src}, Dest: dst, Delete: true, Move: true,
		BackupDir: filepath.Join(t.TempDir(), "bk"),
		OnEvent: func(e copyengine.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Action {
			case copyengine.ActDelete, copyengine.ActBackup, copyengine.ActRemoveSource:
				removals++
				if e.Time.After(last) {
					last = e.Time
				}
			}
		},
		OnFlush: func(at time.Time) { mu.Lock(); flushes = append(flushes, at); mu.Unlock() },
	}
	if _, err := runEngine(t, opt); err != nil {
		t.Fatal(err)
	}
	// x and old/y backed up (each also a delete), old deleted, sub/a and
	// sub removed from the source.
	if removals < 5 {
		t.Fatalf("%d removal events; want at least 5", removals)
	}
	if len(flushes) == 0 {
		t.Fatal("OnFlush never called")
	}
	if end := flushes[len(flushes)-1]; !end.After(last) {
		t.Errorf("the last flush (%v) is not after the last removal (%v): the removals are never reported durable", end, last)
	}
}
