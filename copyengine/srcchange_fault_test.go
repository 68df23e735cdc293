//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestFaultSourceChangesType changes a regular source file while it is
// first read and puts something else in its place: the first try sees a
// changed source, and the second, after the settle window, finds a FIFO or
// a device where the walk saw a file. That is a changed source, never a
// regular file in DEST made of whatever the new object reads as (a device
// like /dev/null reads as empty; one like /dev/zero never ends).
func TestFaultSourceChangesType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"fifo", func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"null device", func(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "fifo" && os.Geteuid() != 0 {
				t.Skip("skipping: making a device node needs root")
			}
			src := filepath.Join(scratchDir(t), "src")
			victim := filepath.Join(src, "victim")
			writeFile(t, victim, pattern(90, 5001))
			writeFile(t, filepath.Join(src, "other"), pattern(91, 7003))
			swapped := &fileio.Fault{Op: fileio.OpRead, PathIs: victim, Nth: 1, Then: func() {
				f, err := os.OpenFile(victim, os.O_WRONLY|os.O_APPEND, 0)
				if err == nil {
					_, err = f.Write([]byte("grown"))
					f.Close()
				}
				if err != nil {
					t.Error(err)
				}
				if err := os.Remove(victim); err != nil {
					t.Error(err)
				}
				if err := tc.make(victim); err != nil {
					t.Error(err)
				}
			}}
			faults := fileio.NewFaultSet(swapped)
			dst := filepath.Join(scratchDir(t), "dst")
			var ev events
			sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record}, faults))
			if swapped.Calls() == 0 {
				t.Fatal("the source was never read: the test does not test anything")
			}
			if st, lerr := os.Lstat(filepath.Join(dst, "victim")); lerr == nil && st.Mode().IsRegular() {
				t.Errorf("the %s became a regular file of %d bytes in DEST (run: %v, %d failed)", tc.name, st.Size(), err, sum.Failed)
			}
			if !errors.Is(err, copyengine.ErrSomeFailed) || !errors.Is(ev.failures()["victim"], copyengine.ErrSourceChanged) {
				t.Errorf("want victim failed with %v, got run error %v, failures %v", copyengine.ErrSourceChanged, err, ev.failures())
			}
			noTemps(t, dst)
		})
	}
}
