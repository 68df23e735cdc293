package copyengine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestLookAheadUnderLowFileLimit copies many small files with a descriptor
// limit far below what the look-ahead would hold open unbounded (4 workers
// x 17 sources, 8 read-back workers x 16 temporaries): the look-ahead takes
// at most a quarter of the limit, so no file fails with "too many open
// files".
func TestLookAheadUnderLowFileLimit(t *testing.T) {
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	writeSmallFiles(t, src, 300, func(i int) string { return fmt.Sprintf("d%d/f%03d", i/100, i) })

	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("skipping: cannot count this process's descriptors: %v", err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(len(open) + 64)
	if low.Cur > old.Max {
		t.Skipf("skipping: the hard limit %d is below %d", old.Max, low.Cur)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Error(err)
		}
	}()
	t.Logf("descriptor limit %d (%d open before the run)", low.Cur, len(open))

	dst := filepath.Join(scr, "dst")
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 4, Verify: copyengine.VerifyDevice})
	if err != nil {
		t.Fatalf("Run under a limit of %d descriptors: %v (failures %v)", low.Cur, err, sum.Failures)
	}
	sameTree(t, src, dst)
}
