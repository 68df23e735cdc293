package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestTempproofNestedRecordDropped: a run into DEST/sub was cut off and
// left its record and a temporary there; a run into DEST then copies a
// source file of the same name onto that temporary (the source names it,
// so it is the user's from then on). The next run into DEST/sub must not
// take the user's file for the leftover its own record names: the run into
// DEST, which wrote in that tree, dropped the record it could not keep
// true. On exFAT and FAT, with no inode numbers to check, and with a record
// cut before an entry's inode was written, the name was the whole proof.
func TestTempproofNestedRecordDropped(t *testing.T) {
	tempproofDests(t, func(t *testing.T, dst string) {
		sub := filepath.Join(dst, "sub")
		noErr(t, os.MkdirAll(sub, 0o755))
		writeFile(t, filepath.Join(sub, ".big.fastcopy-tmp"), []byte("a cut run's partial copy"))
		tempproofRecordKept(t, sub, ".big.fastcopy-tmp")

		src := scratchDir(t)
		user := []byte("the user's own file, named like a temporary\n")
		writeFile(t, filepath.Join(src, "sub", ".big.fastcopy-tmp"), user)
		writeFile(t, filepath.Join(src, "sub", "big"), []byte("big"))
		tempproofRun(t, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true})
		tempproofHas(t, filepath.Join(sub, ".big.fastcopy-tmp"), user)
		if _, err := os.Lstat(filepath.Join(src, "sub", ".big.fastcopy-tmp")); err == nil {
			t.Fatal("the --move kept the source; the test needs it moved")
		}

		other := scratchDir(t)
		writeFile(t, filepath.Join(other, "x"), []byte("x"))
		_, ev := tempproofRun(t, copyengine.Options{Sources: []string{other + "/"}, Dest: sub})
		tempproofNoRemoveTemp(t, ev)
		tempproofHas(t, filepath.Join(sub, ".big.fastcopy-tmp"), user)
	})
}

// TestTempproofRecordNameReservedBelowRoot: a source file named like the
// record, anywhere in the tree, is not copied (a copy below the root would
// be the record of a later run into that directory, naming whatever its
// author chose as leftovers); under --move it is kept.
func TestTempproofRecordNameReservedBelowRoot(t *testing.T) {
	src, dst := scratchDir(t), scratchDir(t)
	writeFile(t, filepath.Join(src, "sub", madeRecordName), []byte("fastcopy-made 1\n+ d 0 \".album.fastcopy-tmp\"\n"))
	photo := []byte("the only copy of a photo\n")
	writeFile(t, filepath.Join(src, "sub", ".album.fastcopy-tmp", "photo.jpg"), photo)
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true})
	if !errors.Is(err, copyengine.ErrSomeFailed) || sum.Failed != 1 {
		t.Errorf("--move: %v, %d failed; want the record's name below the root failed", err, sum.Failed)
	}
	if _, err := os.Lstat(filepath.Join(src, "sub", madeRecordName)); err != nil {
		t.Errorf("the source named like the record was not kept: %v", err)
	}
	other := scratchDir(t)
	writeFile(t, filepath.Join(other, "x"), []byte("x"))
	_, ev := tempproofRun(t, copyengine.Options{Sources: []string{other + "/"}, Dest: filepath.Join(dst, "sub")})
	tempproofNoRemoveTemp(t, ev)
	tempproofHas(t, filepath.Join(dst, "sub", ".album.fastcopy-tmp", "photo.jpg"), photo)
}
