package copyengine_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// runTogether starts one Run per Options at the same moment and returns
// their summaries and errors in order.
func runTogether(t *testing.T, opts ...copyengine.Options) ([]copyengine.Summary, []error) {
	t.Helper()
	sums, errs := make([]copyengine.Summary, len(opts)), make([]error, len(opts))
	var ready, wg sync.WaitGroup
	start := make(chan struct{})
	for i := range opts {
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			<-start
			sums[i], errs[i] = runEngine(t, opts[i])
		}()
	}
	ready.Wait()
	close(start)
	wg.Wait()
	return sums, errs
}

// TestConcurrentRunsOneDest starts two runs into one destination at the
// same moment (the lock is per open directory, so two runs of one process
// exclude each other as two processes do): one is refused with ErrLocked
// while the other copies, or both finish; the destination ends a complete
// copy either way, with no temporary left.
func TestConcurrentRunsOneDest(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	files := genTree(t, src, 1500, 21)
	locked := 0
	for trial := 0; trial < 3; trial++ {
		dst := filepath.Join(scr, "dst"+strconv.Itoa(trial))
		if trial == 2 {
			// An existing, complete copy whose sources all moved on.
			if sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil {
				t.Fatalf("preparing: %v (failures %v)", err, sum.Failures)
			}
			for rel := range files {
				if len(files[rel])%3 == 0 {
					writeFile(t, filepath.Join(src, rel), pattern(int64(len(rel)), len(files[rel])+1))
				}
			}
		}
		opt := copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 4}
		sums, errs := runTogether(t, opt, opt)
		for i, err := range errs {
			switch {
			case err == nil:
			case errors.Is(err, copyengine.ErrLocked):
				locked++
				if sums[i].Copied+sums[i].Failed+sums[i].Dirs != 0 {
					t.Errorf("trial %d: the refused run did something: %+v", trial, sums[i])
				}
			default:
				t.Fatalf("trial %d: Run returned %v (failures %v), want nil or ErrLocked", trial, err, sums[i].Failures)
			}
		}
		if errs[0] != nil && errs[1] != nil {
			t.Fatalf("trial %d: both runs were refused: %v, %v", trial, errs[0], errs[1])
		}
		t.Logf("trial %d: %v, %v; copied %d and %d", trial, errs[0], errs[1], sums[0].Copied, sums[1].Copied)
		sameTree(t, src, dst)
		noTemps(t, dst)
	}
	if locked == 0 {
		t.Error("no run was ever refused: the runs never overlapped, so the lock was not tested")
	}
}

// TestConcurrentRunsSharedCache runs two copies of one tree into different
// destinations at the same moment, both with one open hash cache, then both
// reruns likewise: the copies are complete, the reruns copy nothing, and
// the cache closes cleanly and opens again. Under -race this is the race
// detector's view of one cache serving two runs.
func TestConcurrentRunsSharedCache(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	files := genTree(t, src, 1500, 22)
	db := filepath.Join(scr, "hashes.db")
	hc, err := hashcache.Open(db, hashcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dsts := []string{filepath.Join(scr, "one"), filepath.Join(scr, "two")}
	opts := []copyengine.Options{
		{Sources: []string{src}, Dest: dsts[0], Cache: hc, Jobs: 4},
		{Sources: []string{src}, Dest: dsts[1], Cache: hc, Jobs: 4},
	}
	for pass, want := range []int64{int64(len(files)), 0} {
		sums, errs := runTogether(t, opts...)
		for i := range opts {
			if errs[i] != nil {
				t.Fatalf("pass %d, run %d: %v (failures %v)", pass, i, errs[i], sums[i].Failures)
			}
			if sums[i].Copied != want {
				t.Errorf("pass %d, run %d: copied %d files, want %d", pass, i, sums[i].Copied, want)
			}
			sameTree(t, src, dsts[i])
			noTemps(t, dsts[i])
		}
		if err := hc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := hc.Close(); err != nil {
		t.Fatal(err)
	}
	hc, err = hashcache.Open(db, hashcache.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if w := hc.Warnings(); len(w) != 0 {
		t.Errorf("the shared cache does not open cleanly: %v", w)
	}
	st, err := hc.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries == 0 {
		t.Error("the shared cache is empty after two runs")
	}
}

// TestLockHeldAnInstant: an existing destination whose lock is still held
// for a moment after the run that held it let go (a child the process
// forked keeps a copy of the locked descriptor until it execs) is not
// refused: the run asks again for a while. One created by the run, or
// with --delete, is refused at once, as is a lock held on (see
// TestConcurrentRunsOneDest).
func TestLockHeldAnInstant(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "f"), []byte("data"))
	hold := func(t *testing.T, dst string, d time.Duration) {
		t.Helper()
		h, err := fileio.OpenDir(dst)
		if err != nil {
			t.Fatal(err)
		}
		if err := fileio.Lock(h); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(d)
			h.Close()
		}()
	}
	dst := t.TempDir()
	hold(t, dst, 30*time.Millisecond)
	if sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst}); err != nil || sum.Copied != 1 {
		t.Errorf("copied %d, %v; want the run to wait out a lock held an instant", sum.Copied, err)
	}
	dst2 := t.TempDir()
	hold(t, dst2, 30*time.Millisecond)
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst2, Delete: true}); !errors.Is(err, copyengine.ErrLocked) {
		t.Errorf("--delete: %v, want ErrLocked at once (its guards looked at DEST before the lock)", err)
	}
}
