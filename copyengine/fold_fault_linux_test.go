//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestFaultFoldTempTakenByAnother: on exFAT, another writer creates
// ".A.fastcopy-tmp" just before fastcopy creates the temporary
// ".a.fastcopy-tmp" of "a": one name there. The create's EEXIST is not
// fastcopy's own leftover (listed under another spelling), so the entry is
// left alone and "a" fails; before, it was removed as a leftover.
func TestFaultFoldTempTakenByAnother(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "a"), []byte("a"))
	dst := fs.Path("dst")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dst, ".A"+tempSuffix)
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpCreate, PathHas: "/.a" + tempSuffix, Nth: 1, Then: func() {
		if err := os.WriteFile(other, []byte("another writer's"), 0o644); err != nil {
			t.Error(err)
		}
	}})
	var ev events
	_, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst, OnEvent: ev.record}, faults))
	fails := ev.failures()
	if !errors.Is(err, copyengine.ErrSomeFailed) || len(fails) != 1 || fails["a"] == nil || !strings.Contains(fails["a"].Error(), "not a leftover") {
		t.Errorf("Run: %v, failures %v; want a to fail, its temporary's name taken", err, fails)
	}
	if got, err := os.ReadFile(other); err != nil || string(got) != "another writer's" {
		t.Errorf("the other writer's .A%s holds %q (%v), want it left alone", tempSuffix, got, err)
	}
}
