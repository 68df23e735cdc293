package copyengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestCancelLargeFile cancels a run in the middle of one large file: the
// run stops within the file, not after it, and keeps its temporary, hidden,
// for the next run to resume (--no-resume removes it).
func TestCancelLargeFile(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	const size = 1 << 30
	big := filepath.Join(src, "big")
	writeAllocated(t, big, size)

	dst := filepath.Join(scr, "dst")
	tmp := filepath.Join(dst, ".big"+tempSuffix)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelledAt atomic.Pointer[time.Time]
	go func() {
		for {
			if st, err := os.Lstat(tmp); err == nil && st.Size() >= 32<<20 {
				now := time.Now()
				cancelledAt.Store(&now)
				cancel()
				return
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	sum, err := copyengine.Run(ctx, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever})
	returned := time.Now()
	at := cancelledAt.Load()
	if at == nil {
		t.Fatalf("the run ended (%v, copied %d) before it was cancelled", err, sum.Copied)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	// How long Run took after the cancel is logged, not asserted (it moves
	// with the machine's load); that it stopped within the file is: the
	// temporary it keeps holds less than the file.
	t.Logf("Run returned %v after the cancel", returned.Sub(*at))
	if st, err := os.Lstat(tmp); err != nil || st.Size() >= size {
		t.Errorf("the temporary of the large file is not kept part-written for the next run: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "big")); err == nil {
		t.Error("the large file is under its final name after a cancelled run")
	}
}

// writeAllocated creates path with size bytes allocated but unwritten: it
// reads as zeros at memory speed and is not sparse, so every byte goes
// through the copy loop. The test is skipped where fallocate is refused.
func writeAllocated(t *testing.T, path string, size int64) {
	t.Helper()
	writeFile(t, path, nil)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		t.Skipf("skipping: fallocate: %v", err)
	}
}
