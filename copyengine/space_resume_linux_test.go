package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestSpaceCheckCountsKeptTemporary: on a destination with room for the
// rest of a large file but not for all of it again, a rerun that would take
// up the temporary an interrupted run kept is not refused for want of
// space; it resumes and the file is complete. Under --no-resume the
// temporary is not taken up, so the same run is refused.
func TestSpaceCheckCountsKeptTemporary(t *testing.T) {
	t.Parallel()
	const size, kept = 40 << 20, 30 << 20
	fs := loopfs.Tmpfs(t, 56<<20)
	src, dst := filepath.Join(scratchDir(t), "src"), filepath.Join(fs.Dir, "dst")
	data := pattern(91, size)
	writeFile(t, filepath.Join(src, "big"), data)
	tmp := filepath.Join(dst, ".big"+tempSuffix)
	writeFile(t, tmp, data[:kept]) // what an interrupted run kept
	noErr(t, os.Chmod(tmp, 0o600))
	tempproofRecordKept(t, dst, ".big"+tempSuffix) // and recorded as its own
	settleSources()

	opt := copyengine.WithResumeMin(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, NoResume: true}, 8<<20)
	if _, err := runEngine(t, opt); err == nil {
		t.Fatal("--no-resume: the run was not refused, though the kept temporary and the whole file do not fit")
	}
	if _, err := os.Lstat(tmp); err != nil {
		t.Fatalf("the refused run touched the kept temporary: %v", err)
	}

	var ev events
	opt.NoResume, opt.OnEvent = false, ev.record
	sum, err := runEngine(t, opt)
	if err != nil || sum.Failed != 0 {
		t.Fatalf("rerun that resumes the kept temporary: %v, failures %v", err, sum.Failures)
	}
	if sum.Resumed != 1 || sum.BytesResumed != kept {
		t.Errorf("summary: %d resumed at %d bytes; want 1 at %d", sum.Resumed, sum.BytesResumed, kept)
	}
	if got, err := os.ReadFile(filepath.Join(dst, "big")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("DEST's big: %d bytes, not its source's %d (%v)", len(got), len(data), err)
	}
	if _, err := os.Lstat(tmp); err == nil {
		t.Error("the temporary is still there after the resumed copy")
	}
}
