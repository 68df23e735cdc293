package copyengine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestMeasureFUSEWriters copies one tree to each FUSE driver with 1, 2, 4
// and 8 copy workers and logs, for each, whether the run and the driver
// survived, how long it took, and whether the copy is whole after a
// remount: the measurements docs/benchmarks.md gives for the writer count on
// FUSE. It asserts nothing and runs only with FASTCOPY_MEASURE_FUSE=1 (it
// takes minutes).
func TestMeasureFUSEWriters(t *testing.T) {
	t.Parallel()
	if os.Getenv("FASTCOPY_MEASURE_FUSE") == "" {
		t.Skip("skipping: a measurement, not a test; set FASTCOPY_MEASURE_FUSE=1 to run it")
	}
	src := scratchDir(t)
	for i := 0; i < 600; i++ {
		size := 16 << 10
		if i%100 == 0 {
			size = 8 << 20
		}
		writeFile(t, filepath.Join(src, "d"+strconv.Itoa(i%6), "f"+strconv.Itoa(i)), pattern(int64(i), size))
	}
	rounds := 2
	if n, err := strconv.Atoi(os.Getenv("FASTCOPY_MEASURE_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	for _, typ := range []string{loopfs.ExfatFUSE, loopfs.NTFS3G, loopfs.FuseFAT} {
		for _, jobs := range []int{1, 2, 4, 8} {
			for r := 0; r < rounds; r++ {
				t.Run(fmt.Sprintf("%s/j%d/%d", typ, jobs, r), func(t *testing.T) {
					fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: typ, Size: 256 << 20})
					dst := fs.Path("copy")
					start := time.Now()
					sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: jobs, JobsReason: "measured"})
					took := time.Since(start)
					_, alive := fs.DriverPID()
					outcome := "ok"
					if err != nil {
						outcome = err.Error()
						if len(sum.Failures) > 0 {
							outcome += " (first: " + sum.Failures[0].Err + ")"
						}
					}
					fs.Remount()
					whole := finalFilesMatch(t, src, dst)
					t.Logf("MEASURE %s jobs=%d round=%d: %v, copied %d, failed %d, driver alive after: %v, %d files whole after a remount; %s",
						typ, jobs, r, took.Round(10*time.Millisecond), sum.Copied, sum.Failed, alive == nil, whole, outcome)
				})
			}
		}
	}
}

// TestFUSEDestJobsCapped: a run to a FUSE destination uses at most four
// copy workers unless --jobs says otherwise, and says why.
func TestFUSEDestJobsCapped(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.ExfatFUSE, Size: 64 << 20})
	src := scratchDir(t)
	writeFile(t, filepath.Join(src, "f"), []byte("x"))
	if n, _ := copyengine.ChooseJobs(0, src); n <= 4 {
		t.Skipf("skipping: the source alone gets %d workers here, not more than the cap", n)
	}
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: fs.Path("new", "copy")})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Jobs > 4 || !strings.Contains(sum.JobsReason, "FUSE") {
		t.Errorf("jobs %d (%s), want at most 4 for a FUSE destination", sum.Jobs, sum.JobsReason)
	}
	if n, why := copyengine.ChooseJobsFor(8, src, fs.Dir); n != 8 {
		t.Errorf("--jobs 8 gave %d (%s)", n, why)
	}
	if n, why := copyengine.ChooseJobsFor(0, src, src); n <= 4 {
		t.Errorf("a destination that is not FUSE got %d workers (%s)", n, why)
	}
}
