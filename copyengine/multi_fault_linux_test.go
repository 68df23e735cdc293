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
	"github.com/fastcopy/fastcopy/verify"
)

// TestRunAllOneDestinationMismatch: every write to one destination's
// temporaries is corrupted. That destination's files read back wrong and
// are not placed (ErrMismatch); the other destination, fed from the same
// reads of the source, is complete and verified.
func TestRunAllOneDestinationMismatch(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	files := genTree(t, src, 120, 11)
	settleSources()
	out := t.TempDir()
	bad, good := filepath.Join(out, "bad"), filepath.Join(out, "good")
	corrupt := &fileio.Fault{Op: fileio.OpWrite, PathHas: bad + "/", Corrupt: true}
	opts := destOpts(copyengine.Options{Sources: []string{src}}, bad, good)
	opts[0] = copyengine.WithFaults(opts[0], fileio.NewFaultSet(corrupt))
	opts[1].BwLimit = 8 << 20 // still copying when the other run ends

	res := runAll(t, opts)
	if corrupt.Calls() == 0 {
		t.Fatal("no write matched the fault: it did not reach the run")
	}
	if !errors.Is(res[0].Err, copyengine.ErrMismatch) {
		t.Errorf("the corrupted destination: %v, want ErrMismatch", res[0].Err)
	}
	var nonEmpty int64
	for _, b := range files {
		if len(b) > 0 {
			nonEmpty++
		}
	}
	// Only the empty files (nothing written) are in place there.
	if n := finalFilesMatch(t, src, bad); int64(n) != int64(len(files))-nonEmpty {
		t.Errorf("%d files placed on the corrupted destination, want only the %d empty ones", n, int64(len(files))-nonEmpty)
	}
	if res[1].Err != nil {
		t.Fatalf("the other destination: %v (failures %v)", res[1].Err, res[1].Summary.Failures)
	}
	if s := res[1].Summary; s.Verified < nonEmpty {
		t.Errorf("the other destination: verified %d, want at least the %d non-empty files", s.Verified, nonEmpty)
	}
	sameTree(t, src, good)
	noTemps(t, out)
}

// TestRunAllRetargetedSourceNotMixed: with -L, the source's file is a
// symbolic link; both runs stat what it points to, then, between their
// opens, it is pointed at another file of the same size and times. Run A
// holds the old file and reads its first half; run B opens the new one and
// reads its second half. Whatever each run places must be one of the two
// files whole: run A, whose own file held still, must not place the old
// first half with the new second half as verified.
func TestRunAllRetargetedSourceNotMixed(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	store := filepath.Join(base, "store")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	oldF, newF := filepath.Join(store, "old"), filepath.Join(store, "new")
	replacedNotMixed(t, base, true, oldF, newF, func(link string) error {
		if err := os.Symlink(oldF, link); err != nil {
			return err
		}
		return nil
	}, func(link string) error {
		if err := os.Symlink(newF, link+".new"); err != nil {
			return err
		}
		return os.Rename(link+".new", link)
	})
}

// TestRunAllReplacedExFATSourceNotMixed: the source is on exFAT, whose
// driver reports the mtime as the change time; between the two runs'
// opens another file of the same size and mtime is renamed over the
// source's file. The run holding the replaced file must not place its
// first half with the new file's second half as verified.
func TestRunAllReplacedExFATSourceNotMixed(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	base := fs.Path("card")
	store := filepath.Join(base, "store")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	oldF, newF := filepath.Join(store, "old"), filepath.Join(store, "new")
	replacedNotMixed(t, base, false, oldF, newF, func(victim string) error {
		return os.Rename(oldF, victim)
	}, func(victim string) error {
		return os.Rename(newF, victim)
	})
}

// replacedNotMixed copies base/src to two destinations; base/src/victim is
// made by place from oldF, and turned into newF's file by replace between
// the two runs' opens, run A having read the first half of the old one.
func replacedNotMixed(t *testing.T, base string, deref bool, oldF, newF string, place, replace func(victim string) error) {
	src := filepath.Join(base, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	half := verify.BufSize
	oldData := bytes.Repeat([]byte{'o'}, 2*half)
	newData := bytes.Repeat([]byte{'n'}, 2*half)
	mtime := time.Now().Add(-time.Hour).Truncate(2 * time.Second)
	for p, data := range map[string][]byte{oldF: oldData, newF: newData} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(src, "victim")
	if err := place(victim); err != nil {
		t.Fatal(err)
	}
	settleSources()
	out := t.TempDir()
	da, db := filepath.Join(out, "a"), filepath.Join(out, "b")

	wait := func(c chan struct{}, what string) {
		select {
		case <-c:
		case <-time.After(30 * time.Second):
			t.Errorf("never happened: %s", what)
		}
	}
	aRead := make(chan struct{}) // run A read the first half and writes it
	bRead := make(chan struct{}) // run B reads from its descriptor
	// Run A's first write of the file waits for run B's first read.
	aWrite := &fileio.Fault{Op: fileio.OpWrite, PathHas: da + "/.victim", Nth: 1, Then: func() {
		close(aRead)
		wait(bRead, "run B reads the source")
	}}
	// Run B opens the file once run A has read its first half, and it was
	// replaced meanwhile.
	bOpen := &fileio.Fault{Op: fileio.OpOpen, PathHas: victim, Nth: 1, Then: func() {
		wait(aRead, "run A writes the first half")
		if err := replace(victim); err != nil {
			t.Error(err)
		}
	}}
	bReadF := &fileio.Fault{Op: fileio.OpRead, PathHas: victim, Nth: 1, Then: func() { close(bRead) }}
	opts := destOpts(copyengine.Options{Sources: []string{src}, Dereference: deref}, da, db)
	opts[0] = copyengine.WithFaults(opts[0], fileio.NewFaultSet(aWrite))
	opts[1] = copyengine.WithFaults(opts[1], fileio.NewFaultSet(bOpen, bReadF))

	res := runAll(t, opts)
	if aWrite.Calls() == 0 || bOpen.Calls() == 0 {
		t.Fatal("the faults did not reach the runs")
	}
	for i, d := range []string{da, db} {
		got, err := os.ReadFile(filepath.Join(d, "victim"))
		if err != nil {
			t.Logf("destination %d: %v (run: %v)", i, err, res[i].Err)
			continue
		}
		if !bytes.Equal(got, oldData) && !bytes.Equal(got, newData) {
			t.Errorf("destination %d holds %d bytes of the old file and %d of the new one, neither file (run: %v, %d bytes handed to it)",
				i, bytes.Count(got, []byte{'o'}), bytes.Count(got, []byte{'n'}), res[i].Err, res[i].Summary.BytesShared)
		}
	}
	noTemps(t, out)
}
