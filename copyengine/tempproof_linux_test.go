package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// A source file named like fastcopy's temporary is the user's file: it is
// copied like any other, and neither its copy in DEST nor a file of that
// name already there is ever taken for a leftover (removed, taken up,
// left out of --delete). fastcopy removes only what a record shows a run
// made (internal/made).

// tempproofDests are the destinations the tests run on: the test's scratch
// directory (tmpfs or ext4), and real exFAT and FAT through FUSE where this
// machine can mount them.
func tempproofDests(t *testing.T, run func(t *testing.T, dest string)) {
	t.Run("scratch", func(t *testing.T) { run(t, scratchDir(t)) })
	t.Run("exfat-fuse", func(t *testing.T) {
		fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.ExfatFUSE, Size: 64 << 20})
		run(t, fs.Path("d"))
	})
	t.Run("fusefat", func(t *testing.T) {
		fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.FuseFAT, Size: 64 << 20})
		run(t, fs.Path("d"))
	})
}

// tempproofRun runs opt and fails the test for any failure but the ones
// a drive cannot keep (fusefat has no chmod or chown: ENOSYS).
func tempproofRun(t *testing.T, opt copyengine.Options) (copyengine.Summary, *events) {
	t.Helper()
	var ev events
	opt.OnEvent = ev.record
	sum, err := runEngine(t, opt)
	if err != nil && !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatalf("run: %v", err)
	}
	for rel, err := range ev.failures() {
		if !errors.Is(err, syscall.ENOSYS) {
			t.Errorf("run: %s failed: %v", rel, err)
		}
	}
	return sum, &ev
}

// tempproofHas fails the test unless path holds want.
func tempproofHas(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (the user's file is gone)", path, err)
	} else if !bytes.Equal(got, want) {
		t.Errorf("%s holds %d bytes that are not the user's %d", path, len(got), len(want))
	}
}

// tempproofNoRemoveTemp fails the test for each remove-temp event.
func tempproofNoRemoveTemp(t *testing.T, ev *events) {
	t.Helper()
	for _, e := range ev.all {
		if e.Action == copyengine.ActCleanTmp {
			t.Errorf("remove-temp %s: a name alone was taken for a leftover", e.Path)
		}
	}
}

// The offload of the issue: card1 holds IMG_1.jpg and the user's
// .IMG_1.jpg.fastcopy-tmp, moved into photos; then card2's IMG_1.jpg
// (another photo, in another directory of photos) and card3's, into the
// same directory. The user's file must be in photos after each run.
func TestTempproofMoveTwoCards(t *testing.T) {
	tempproofDests(t, func(t *testing.T, photos string) {
		user := []byte("the user's own file, whatever its name\n")
		card1 := scratchDir(t)
		writeFiles(t, card1, map[string][]byte{"IMG_1.jpg": pattern(1, 3000), ".IMG_1.jpg.fastcopy-tmp": user})
		tempproofRun(t, copyengine.Options{Sources: []string{card1 + "/"}, Dest: photos, Move: true})
		for _, n := range []string{"IMG_1.jpg", ".IMG_1.jpg.fastcopy-tmp"} {
			if _, err := os.Lstat(filepath.Join(card1, n)); err == nil {
				t.Errorf("card1/%s: not moved", n)
			}
		}
		tempproofHas(t, filepath.Join(photos, ".IMG_1.jpg.fastcopy-tmp"), user)
		tempproofHas(t, filepath.Join(photos, "IMG_1.jpg"), pattern(1, 3000))

		card2 := scratchDir(t)
		writeFiles(t, card2, map[string][]byte{"IMG_1.jpg": pattern(2, 4000)})
		_, ev := tempproofRun(t, copyengine.Options{Sources: []string{card2 + "/"}, Dest: photos, Move: true})
		tempproofNoRemoveTemp(t, ev)
		tempproofHas(t, filepath.Join(photos, ".IMG_1.jpg.fastcopy-tmp"), user)
		tempproofHas(t, filepath.Join(photos, "IMG_1.jpg"), pattern(2, 4000))
		if _, err := os.Lstat(filepath.Join(card2, "IMG_1.jpg")); err == nil {
			t.Error("card2/IMG_1.jpg: not moved")
		}
		left := false
		for _, e := range ev.all {
			left = left || (e.Action == copyengine.ActLeaveTemp && e.Path == ".IMG_1.jpg.fastcopy-tmp")
		}
		if !left {
			t.Error("the second run did not report the temporary-like name it left alone (leave-temp)")
		}
		if _, err := os.Lstat(filepath.Join(photos, ".fastcopy-made")); err == nil {
			t.Error("a run that finished left its record of temporaries behind")
		}
	})
}

// A plain copy of any source into a DEST that holds such a file leaves it
// alone, also when the source names the file it is a temporary's name of.
func TestTempproofPlainCopyLeavesUserTemp(t *testing.T) {
	tempproofDests(t, func(t *testing.T, dest string) {
		user := []byte("kept\n")
		writeFiles(t, dest, map[string][]byte{".a.fastcopy-tmp": user, "sub/.b.fastcopy-tmp": user, ".c.fastcopy-tmp": user})
		if err := os.Mkdir(filepath.Join(dest, ".newdir.fastcopy-tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dest, ".newdir.fastcopy-tmp", "inside"), user)
		src := scratchDir(t)
		writeFiles(t, src, map[string][]byte{"a": pattern(3, 100), "sub/b": pattern(4, 200), "other": pattern(5, 10), "newdir/x": pattern(6, 10)})
		_, ev := tempproofRun(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dest})
		tempproofNoRemoveTemp(t, ev)
		tempproofHas(t, filepath.Join(dest, ".a.fastcopy-tmp"), user)
		tempproofHas(t, filepath.Join(dest, "sub", ".b.fastcopy-tmp"), user)
		tempproofHas(t, filepath.Join(dest, ".c.fastcopy-tmp"), user)
		tempproofHas(t, filepath.Join(dest, ".newdir.fastcopy-tmp", "inside"), user)
		tempproofHas(t, filepath.Join(dest, "a"), pattern(3, 100))
		tempproofHas(t, filepath.Join(dest, "sub", "b"), pattern(4, 200))
		tempproofHas(t, filepath.Join(dest, "newdir", "x"), pattern(6, 10))
	})
}

// --delete: a temp-like name that the source has is kept like any source
// name (copied over from the source); one the source lacks is an entry
// like any other, which --backup-dir keeps; a genuine leftover of an
// interrupted run (recorded) is removed by the walk, not kept forever.
func TestTempproofDelete(t *testing.T) {
	tempproofDests(t, func(t *testing.T, dest string) {
		user := []byte("user\n")
		src := scratchDir(t)
		writeFiles(t, src, map[string][]byte{"a": pattern(7, 100), ".a.fastcopy-tmp": user})
		tempproofRun(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dest, Delete: true})
		tempproofHas(t, filepath.Join(dest, ".a.fastcopy-tmp"), user)
		// Rerun, unchanged: the copy is the source's, never a leftover.
		_, ev := tempproofRun(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dest, Delete: true})
		tempproofNoRemoveTemp(t, ev)
		tempproofHas(t, filepath.Join(dest, ".a.fastcopy-tmp"), user)
		// The source loses it: --delete removes it as any entry the
		// source lacks, into --backup-dir, where it is intact.
		if err := os.Remove(filepath.Join(src, ".a.fastcopy-tmp")); err != nil {
			t.Fatal(err)
		}
		// (FAT and exFAT have no hard links, which --backup-dir in the
		// same filesystem needs: there it is a plain --delete.)
		var bdir string
		if strings.HasSuffix(t.Name(), "/scratch") {
			bdir = filepath.Join(dest, "..", filepath.Base(dest)+"-old")
		}
		tempproofRun(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dest, Delete: true, BackupDir: bdir})
		if _, err := os.Lstat(filepath.Join(dest, ".a.fastcopy-tmp")); err == nil {
			t.Error("--delete kept an entry the source lacks because of its name")
		}
		if bdir != "" {
			tempproofHas(t, filepath.Join(bdir, ".a.fastcopy-tmp"), user)
		}
	})
}
