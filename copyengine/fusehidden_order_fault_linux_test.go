//go:build fcfault && linux

package copyengine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestFUSEHiddenStoppedRemovesLast stops a run on ntfs-3g (whose inode
// numbers the run does not trust, so that each temporary's descriptor from
// its write is kept until its read-back) while files wait for their
// read-back, and checks at every removal of a temporary that the run
// holds no descriptor of any temporary any more. A driver may be told of a
// close after close returns: a name removed right after its file's last
// close, while other files are still being dropped, may be hidden.
func TestFUSEHiddenStoppedRemovesLast(t *testing.T) {
	src := scratchDir(t)
	manyFiles(t, src, 48, 64<<10)
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.NTFS3G, Size: 64 << 20})
	dst := fs.Path("stopped")
	var mu sync.Mutex
	var early []string
	removes := &fileio.Fault{Op: fileio.OpRemove, PathHas: ".fastcopy-tmp"}
	removes.Then = func() {
		for _, l := range openUnder(t, fs.Dir) {
			if strings.Contains(l, ".fastcopy-tmp") && !strings.Contains(l, ".case-probe") {
				mu.Lock()
				early = append(early, l)
				mu.Unlock()
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	opts := copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1, OnEvent: func(e copyengine.Event) {
		if e.Action == copyengine.ActCopy {
			once.Do(cancel) // files wait for their read-back
		}
	}}
	sum, err := copyengine.Run(ctx, copyengine.WithFaults(opts, fileio.NewFaultSet(removes)))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v (copied %d); want it stopped", err, sum.Copied)
	}
	if removes.Calls() == 0 {
		t.Fatalf("no temporary was removed: the run was not stopped while files waited for their read-back (copied %d)", sum.Copied)
	}
	if len(early) != 0 {
		t.Errorf("temporaries removed while the run still held descriptors of temporaries (%d such descriptors seen at the removals), e.g. %q", len(early), early[0])
	}
	noTemps(t, dst)
}
