package copyengine_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestCancel cancels runs over a tree of thousands of files at different
// stages. Run returns context.Canceled promptly, no temporary is left, every
// file under its final name equals its source, no goroutine of the run is
// left behind, and a rerun finishes the copy.
func TestCancel(t *testing.T) {
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	genTree(t, src, 3000, 7)

	cases := []struct {
		name string
		// arm returns the options' OnEvent and a watcher to run beside Run;
		// either calls cancel when the run has reached the stage.
		arm func(cancel func(), stats *copyengine.Stats) (func(copyengine.Event), func(stop <-chan struct{}))
	}{
		{"while writing", func(cancel func(), stats *copyengine.Stats) (func(copyengine.Event), func(<-chan struct{})) {
			// Data written, nothing committed yet: the first batch waits
			// for 2048 files, 256 MiB or a second.
			return nil, func(stop <-chan struct{}) {
				for stats.BytesWritten.Load() < 4<<20 {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
				}
				cancel()
			}
		}},
		{"while committing", func(cancel func(), _ *copyengine.Stats) (func(copyengine.Event), func(<-chan struct{})) {
			var n atomic.Int64
			return func(ev copyengine.Event) {
				if ev.Action == copyengine.ActCopy && n.Add(1) == 300 {
					cancel()
				}
			}, nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(scr, "dst-"+strings.ReplaceAll(c.name, " ", "-"))
			goroutines := runtime.NumGoroutine()

			ctx, cancelCtx := context.WithCancel(context.Background())
			defer cancelCtx()
			var cancelledAt atomic.Pointer[time.Time]
			cancel := func() {
				now := time.Now()
				cancelledAt.CompareAndSwap(nil, &now)
				cancelCtx()
			}
			stats := &copyengine.Stats{}
			onEvent, watch := c.arm(cancel, stats)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if watch != nil {
				wg.Add(1)
				go func() { defer wg.Done(); watch(stop) }()
			}
			sum, err := copyengine.Run(ctx, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 8, Stats: stats, OnEvent: onEvent})
			returned := time.Now()
			close(stop)
			wg.Wait()

			at := cancelledAt.Load()
			if at == nil {
				t.Fatalf("the run ended (%v, copied %d) before it was cancelled", err, sum.Copied)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v, want context.Canceled", err)
			}
			// Generous for -race on two cores; a run that finished its work
			// instead of stopping takes several times as long.
			if d := returned.Sub(*at); d > 2*time.Second {
				t.Errorf("Run returned %v after the cancel", d)
			} else {
				t.Logf("Run returned %v after the cancel; %d files in place", d, sum.Copied)
			}
			if len(sum.Failures) != 0 {
				t.Errorf("a cancelled run reports its fallout as failures: %v", sum.Failures)
			}
			noTemps(t, dst)
			if n := finalFilesMatch(t, src, dst); int64(n) != sum.Copied {
				t.Errorf("%d files under their final names, the summary says %d copied", n, sum.Copied)
			}
			if sum.Copied >= 3000 {
				t.Errorf("all %d files copied: the cancel came too late to test anything", sum.Copied)
			}
			// No goroutine of the run outlives it (a few of the runtime's may
			// come and go).
			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				buf := make([]byte, 1<<16)
				t.Errorf("%d goroutines after the run, %d before:\n%s", n, goroutines, buf[:runtime.Stack(buf, true)])
			}

			sum2, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
			if err != nil {
				t.Fatalf("rerun: %v (failures %v)", err, sum2.Failures)
			}
			if sum2.Skipped < sum.Copied {
				t.Errorf("rerun skipped %d files, but %d were in place", sum2.Skipped, sum.Copied)
			}
			sameTree(t, src, dst)
			noTemps(t, dst)
		})
	}
}
