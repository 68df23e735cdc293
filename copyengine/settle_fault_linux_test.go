//go:build fcfault && linux

package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestFaultWholeSecondSourceRewrittenDuringRead: on a source with
// whole-second times (ext4 with 128-byte inodes) a write in the second of
// the file's last change leaves its ctime and mtime as they were. The file
// is created, and rewritten at both ends in place between the first and
// the second read of the copy, all within one second: no stat can show it.
// The copy must not be torn: the run waits out the ctime's second before it
// trusts a read (the rewrite then moves the ctime, and the file is read
// again), or fails the file as changed.
func TestFaultWholeSecondSourceRewrittenDuringRead(t *testing.T) {
	t.Parallel()
	vol := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 48 << 20, Mkfs: []string{"-I", "128"}})
	src := vol.Path("src")
	big := filepath.Join(src, "big")
	const size = 4 << 20
	token := func(gen byte) []byte { return bytes.Repeat([]byte{gen}, 4096) }
	rewrite := func(gen byte) {
		f, err := os.OpenFile(big, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteAt(token(gen), 0)
			if err == nil {
				_, err = f.WriteAt(token(gen), size-4096)
			}
			f.Close()
		}
		if err != nil {
			t.Error(err)
		}
	}
	torn := &fileio.Fault{Op: fileio.OpRead, PathIs: big, Nth: 2, Then: func() { rewrite('B') }}
	faults := fileio.NewFaultSet(torn)

	startOfSecond()
	writeFile(t, big, make([]byte, size))
	rewrite('A')
	// Past the settle window of a fine ctime, well inside the second.
	time.Sleep(100 * time.Millisecond)
	dst := filepath.Join(scratchDir(t), "dst")
	var ev events
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Jobs: 1, OnEvent: ev.record}, faults))
	if torn.Calls() < 2 {
		t.Fatalf("the source was read %d times: the rewrite never happened", torn.Calls())
	}
	if err != nil {
		if !errors.Is(ev.failures()["big"], copyengine.ErrSourceChanged) {
			t.Fatalf("run: %v (failures %v); want success or big failed as changed", err, ev.failures())
		}
		return
	}
	got, rerr := os.ReadFile(filepath.Join(dst, "big"))
	noErr(t, rerr)
	head, tail := got[0], got[size-1]
	if head != tail {
		t.Errorf("the run reported success (%d copied) with a torn copy: head from generation %q, tail from %q", sum.Copied, head, tail)
	}
}
