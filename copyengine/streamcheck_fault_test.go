//go:build fcfault && linux

package copyengine_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// bigTree writes a tree with one file large enough to be read back while
// it is written (64 MiB, four windows) and two small ones.
func bigTree(t *testing.T) string {
	t.Helper()
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "big"), pattern(40, 64<<20))
	writeFile(t, filepath.Join(src, "a"), pattern(41, 5000))
	writeFile(t, filepath.Join(src, "sub/b"), pattern(42, 70000))
	return src
}

// TestStreamCheckCorrupt flips a byte in the middle of a large file as it
// is written, in both read-back modes. Corrupting every write must fail the
// file (the read-back that runs while the file is written may never pass
// bad data); corrupting one write must end with a correct copy after the
// retry.
func TestStreamCheckCorrupt(t *testing.T) {
	t.Parallel()
	for _, mode := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyCache} {
		t.Run(string(mode)+"/every write", func(t *testing.T) {
			src := bigTree(t)
			dst := filepath.Join(scratchDir(t), "dst")
			faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpWrite, PathHas: "big", Corrupt: true})
			sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Verify: mode}, faults))
			if !errors.Is(err, copyengine.ErrMismatch) || sum.Mismatches != 1 {
				t.Fatalf("Run returned %v with %d mismatches; want ErrMismatch for big", err, sum.Mismatches)
			}
			if len(sum.Failures) != 1 || sum.Failures[0].Path != "big" {
				t.Errorf("failures %v; want big alone", sum.Failures)
			}
			if n := finalFilesMatch(t, src, dst); n != 2 {
				t.Errorf("%d files in place, want the 2 small ones", n)
			}
			noTemps(t, dst)
		})
		t.Run(string(mode)+"/one write", func(t *testing.T) {
			src := bigTree(t)
			dst := filepath.Join(scratchDir(t), "dst")
			// The 40th 1 MiB write: in the third window.
			corrupt := &fileio.Fault{Op: fileio.OpWrite, PathHas: "big", Corrupt: true, Nth: 40}
			sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Verify: mode}, fileio.NewFaultSet(corrupt)))
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if corrupt.Calls() < 40 {
				t.Fatalf("%d writes matched the fault, which corrupts the 40th: it never took effect", corrupt.Calls())
			}
			if sum.Verified != 3 || sum.VerifiedBytes != 64<<20+75000 {
				t.Errorf("verified %d files, %d bytes; want all 3", sum.Verified, sum.VerifiedBytes)
			}
			sameTree(t, src, dst)
		})
	}
}

// TestStreamCheckFallsBack makes the read-back that runs while a large file
// is written fail, at its open and at a read, in both read-back modes: the file is then read back by
// the committer after the batch's flush, and the run succeeds. Had the
// early read-back not been wired into the copy, these faults would hit the
// committer's read-back and fail the file.
func TestStreamCheckFallsBack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		fault *fileio.Fault
	}{
		{"open", &fileio.Fault{Op: fileio.OpOpen, PathHas: ".big.fastcopy-tmp", Nth: 1, Err: syscall.EINVAL}},
		{"read", &fileio.Fault{Op: fileio.OpRead, PathHas: ".big.fastcopy-tmp", Nth: 2, Err: syscall.EIO}},
	} {
		for _, mode := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyCache} {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				src := bigTree(t)
				dst := filepath.Join(scratchDir(t), "dst")
				f := *c.fault // each run counts its own calls
				faults := fileio.NewFaultSet(&f)
				sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Verify: mode}, faults))
				if err != nil {
					t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
				}
				if sum.Verified != 3 {
					t.Errorf("verified %d files, want 3", sum.Verified)
				}
				if f.Calls() < f.Nth {
					t.Errorf("%d calls matched the fault, which applies to call %d: it never took effect", f.Calls(), f.Nth)
				}
				sameTree(t, src, dst)
			})
		}
	}
}
