//go:build fcfault && linux

package copyengine_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// A counterpart under --link-dest whose inode has as many links as its
// filesystem allows (EMLINK) is not linked to: the file is copied, and
// the run says which file and why; the others are linked.
func TestLinkDestOutOfLinks(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, filepath.Join(src, "a.txt"), []byte("alpha"))
	writeFile(t, filepath.Join(src, "b.txt"), []byte("bravo"))
	writeFile(t, filepath.Join(src, "sub", "c.txt"), []byte("charlie"))
	settleSources()
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: filepath.Join(dir, "day1")}); err != nil {
		t.Fatal(err)
	}
	emlink := &fileio.Fault{Op: fileio.OpLink, PathHas: filepath.Join(dir, "day2", ".b.txt"), Err: syscall.EMLINK}
	var ev events
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: filepath.Join(dir, "day2"), LinkDest: []string{"../day1"}, OnEvent: ev.record}, fileio.NewFaultSet(emlink)))
	if err != nil {
		t.Fatal(err)
	}
	if emlink.Calls() == 0 {
		t.Fatal("the EMLINK fault was never reached")
	}
	if sum.LinkDest != 2 || sum.Copied != 1 {
		t.Errorf("linked %d, copied %d; want 2 linked and b.txt copied", sum.LinkDest, sum.Copied)
	}
	said := false
	for _, e := range ev.all {
		if e.Action == copyengine.ActLinkDestCopy && e.Path == "b.txt" && e.Err != nil && strings.Contains(e.Err.Error(), "as many hard links") {
			said = true
		}
	}
	if !said || len(sum.LinkDestNotes) != 1 || !strings.Contains(sum.LinkDestNotes[0], `"b.txt"`) {
		t.Errorf("the fallback of b.txt was not said: %v", sum.LinkDestNotes)
	}
	if sameFile(t, filepath.Join(dir, "day1", "b.txt"), filepath.Join(dir, "day2", "b.txt")) {
		t.Errorf("b.txt is linked in spite of EMLINK")
	}
	if !sameFile(t, filepath.Join(dir, "day1", "a.txt"), filepath.Join(dir, "day2", "a.txt")) {
		t.Errorf("a.txt is not linked")
	}
	verifyTree(t, src, filepath.Join(dir, "day2"))
	noTemps(t, filepath.Join(dir, "day2"))
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	var sa, sb syscall.Stat_t
	if err := syscall.Lstat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Lstat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
