package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestProbeDirRename asks fusefat, which loses the contents of a renamed
// directory, and a kernel filesystem, which keeps them, whether a
// directory rename keeps a file; the probe leaves nothing behind.
func TestProbeDirRename(t *testing.T) {
	t.Parallel()
	fat := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.FuseFAT, Size: 64 << 20})
	for _, c := range []struct {
		dir   string
		keeps bool
	}{{scratchDir(t), true}, {fat.Dir, false}} {
		d, err := fileio.OpenDir(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		err = fileio.ProbeDirRename(d, ".a.fastcopy-tmp", ".b.fastcopy-tmp", []byte("probe\n"))
		d.Close()
		if c.keeps && err != nil {
			t.Errorf("%s: %v", c.dir, err)
		}
		if !c.keeps && !errors.Is(err, fileio.ErrRenameLoses) {
			t.Errorf("%s: the probe says %v, not that the file was lost", c.dir, err)
		}
		if names, _ := os.ReadDir(c.dir); len(names) != 0 {
			t.Errorf("%s: the probe left %v", c.dir, names)
		}
	}
}

// TestFusefatNewDirsKeptAfterRemount copies a tree of new directories to
// FAT32 through fusefat, which loses the contents of a renamed directory:
// staged directories would be verified and then found empty after a
// remount. The run finds that out by probing and writes their files under
// temporary names instead; after an unmount and a mount every file placed
// is there.
func TestFusefatNewDirsKeptAfterRemount(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.FuseFAT, Size: 64 << 20})
	src := scratchDir(t)
	genTree(t, src, 60, 15)
	dst := fs.Path("copy")
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
	if err != nil && !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatal(err)
	}
	for rel, err := range ev.failures() {
		// fusefat has no chmod or chown (ENOSYS): what a drive cannot
		// keep is not what this test is about.
		if !errors.Is(err, syscall.ENOSYS) {
			t.Errorf("%s: %v", rel, err)
		}
	}
	if sum.StagingNote == "" {
		t.Error("no staging note: the run did not find that directory renames lose files here")
	}
	t.Logf("staging note: %s", sum.StagingNote)
	placed := map[string]bool{}
	for _, e := range ev.all {
		if e.Action == copyengine.ActCopy {
			placed[e.Path] = true
		}
	}
	if len(placed) == 0 {
		t.Skip("skipping: no file was placed (this fusefat cannot set modes or owners, and the run fails such files)")
	}
	fs.Remount()
	deep := 0
	for rel := range placed {
		want, _ := os.ReadFile(filepath.Join(src, rel))
		got, err := os.ReadFile(filepath.Join(dst, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s was placed, and after a remount: %d bytes of %d, %v", rel, len(got), len(want), err)
		}
		if filepath.Dir(rel) != "." {
			deep++
		}
	}
	if deep == 0 {
		t.Error("no file was placed in a new directory")
	}
	noTemps(t, fs.Dir)
}
