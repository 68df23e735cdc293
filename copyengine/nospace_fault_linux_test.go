//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestDestFullStopsEarly copies twelve 5 MiB files of one size onto 38 MiB:
// the up-front check counts equal sizes once (they may be duplicates) and
// lets the run start, and the destination fills up after seven. The run
// stops at the first ENOSPC: one failure, the files placed are whole and
// verify, no temporary is left, no file is started after it, and the error
// names the destination, what was copied and what is free.
func TestDestFullStopsEarly(t *testing.T) {
	t.Parallel()
	fs := loopfs.Tmpfs(t, 38<<20)
	src := filepath.Join(scratchDir(t), "src")
	const files = 12
	for i := 0; i < files; i++ {
		writeFile(t, filepath.Join(src, fmt.Sprintf("f%02d", i)), pattern(int64(i), 5<<20))
	}
	dst := fs.Path("dst")
	// One counting fault per file: its temporary's creation.
	var created []*fileio.Fault
	for i := 0; i < files; i++ {
		created = append(created, &fileio.Fault{Op: fileio.OpCreate, PathHas: fmt.Sprintf("/.f%02d", i)})
	}
	faults := fileio.NewFaultSet(created...)
	started := func() (n int64) {
		for _, f := range created {
			if f.Calls() > 0 {
				n++
			}
		}
		return n
	}

	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1}, faults))
	t.Logf("copied %d, failed %d, %d files started; error: %v", sum.Copied, sum.Failed, started(), err)
	var full *copyengine.DestFullError
	if !errors.As(err, &full) {
		t.Fatalf("Run returned %v (failures %v), want a DestFullError", err, sum.Failures)
	}
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Errorf("a full destination is not ErrSomeFailed (exit 3): %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"destination full: " + fmt.Sprintf("%q", dst), fmt.Sprintf("after %d of %d files", sum.Copied, files), "free space: ", "make room and rerun"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if sum.Copied == 0 || sum.Copied >= files {
		t.Fatalf("copied %d of %d files on a filesystem with room for about seven", sum.Copied, files)
	}
	if sum.Failed != 1 || len(sum.Failures) != 1 {
		t.Errorf("%d failures reported (%v), want exactly one: the file that did not fit", sum.Failed, sum.Failures)
	}
	for _, f := range sum.Failures {
		if !strings.Contains(f.Err, "no space left on device") {
			t.Errorf("failure of %s does not name the cause: %q", f.Path, f.Err)
		}
	}
	// One worker: the files placed and the one that failed were created,
	// none after it.
	if n := started(); n != sum.Copied+1 {
		t.Errorf("%d files started on the destination for %d copied and one failed: the run went on after it was full", n, sum.Copied)
	}
	noTemps(t, fs.Dir)
	if n := finalFilesMatch(t, src, dst); int64(n) != sum.Copied {
		t.Errorf("%d files under their final names, the summary says %d copied", n, sum.Copied)
	}
}
