//go:build fcfault && linux

package copyengine_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/verify"
)

// faultTree writes a small tree whose file "victim" the faults aim at and
// returns the source directory and the contents by relative path.
func faultTree(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	src := filepath.Join(scratchDir(t), "src")
	files := map[string][]byte{
		"a":      pattern(20, 150000),
		"b":      pattern(21, 10),
		"sub/c":  pattern(22, 3<<20), // several writes
		"victim": pattern(23, 200000),
	}
	writeFiles(t, src, files)
	return src, files
}

// onlyVictimFailed checks the outcome of a run in which the file "victim"
// alone was to fail with a message containing cause.
func onlyVictimFailed(t *testing.T, src, dst string, sum copyengine.Summary, cause string) {
	t.Helper()
	if sum.Failed != 1 || len(sum.Failures) != 1 || sum.Failures[0].Path != "victim" {
		t.Fatalf("failed %d: %v; want the victim alone", sum.Failed, sum.Failures)
	}
	if msg := sum.Failures[0].Err; !strings.Contains(msg, cause) {
		t.Errorf("failure reads %q; want the cause %q", msg, cause)
	}
	if sum.Copied != 3 {
		t.Errorf("copied %d, want the 3 other files", sum.Copied)
	}
	if _, err := os.Lstat(filepath.Join(dst, "victim")); err == nil {
		t.Error("the failed file exists under its final name")
	}
	noTemps(t, dst)
	if n := finalFilesMatch(t, src, dst); n != 3 {
		t.Errorf("%d files in place, want 3", n)
	}
}

// TestFaultOneFile injects one failure into the copy of one file: that file
// fails alone, with its cause, leaves nothing behind, and the rest is
// copied; a rerun without the fault completes the copy.
func TestFaultOneFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		fault func(src, dst string) *fileio.Fault
		cause string
	}{
		{"source open EIO", func(src, _ string) *fileio.Fault {
			return &fileio.Fault{Op: fileio.OpOpen, PathHas: filepath.Join(src, "victim"), Err: syscall.EIO}
		}, "input/output error"},
		{"source read EIO", func(src, _ string) *fileio.Fault {
			return &fileio.Fault{Op: fileio.OpRead, PathHas: filepath.Join(src, "victim"), Err: syscall.EIO}
		}, "input/output error"},
		{"create EACCES", func(string, string) *fileio.Fault {
			// (ENOSPC stops the whole run: TestFaultCreateNth.)
			return &fileio.Fault{Op: fileio.OpCreate, PathHas: "victim", Err: syscall.EACCES}
		}, "permission denied"},
		{"write EIO", func(string, string) *fileio.Fault {
			return &fileio.Fault{Op: fileio.OpWrite, PathHas: "victim", Err: syscall.EIO}
		}, "input/output error"},
		{"short write", func(string, string) *fileio.Fault {
			// Half the buffer reaches the file, then the write fails.
			return &fileio.Fault{Op: fileio.OpWrite, PathHas: "victim", Short: true, Err: syscall.EFBIG}
		}, "file too large"},
		{"read-back EIO", func(_, dst string) *fileio.Fault {
			return &fileio.Fault{Op: fileio.OpRead, PathHas: filepath.Join(dst, ".victim"), Err: syscall.EIO}
		}, "input/output error"},
		{"rename EIO", func(string, string) *fileio.Fault {
			return &fileio.Fault{Op: fileio.OpRename, PathHas: "victim", Err: syscall.EIO}
		}, "input/output error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, _ := faultTree(t)
			dst := filepath.Join(scratchDir(t), "dst")
			faults := fileio.NewFaultSet(c.fault(src, dst))
			sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever}, faults))
			if !errors.Is(err, copyengine.ErrSomeFailed) {
				t.Errorf("Run returned %v, want ErrSomeFailed", err)
			}
			onlyVictimFailed(t, src, dst, sum, c.cause)

			sum, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
			if err != nil || sum.Copied != 1 || sum.Skipped != 3 {
				t.Errorf("rerun: %v, copied %d, skipped %d; want the victim copied and the rest skipped", err, sum.Copied, sum.Skipped)
			}
			sameTree(t, src, dst)
		})
	}
}

// TestFaultCorruptWrite flips a byte of what is written to one file. When
// every write is corrupted the retry mismatches too: the file fails with
// both digests and never takes its name. When only the first write is, the
// retry puts a correct file in place. With --verify=cache the worker reads
// a file back as soon as it is written (internal/transfer: checkCached); a file that reads back
// wrong there is read again after the flush, so the outcome is the same.
func TestFaultCorruptWrite(t *testing.T) {
	t.Parallel()
	for _, mode := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyCache} {
		t.Run(string(mode), func(t *testing.T) { testFaultCorruptWrite(t, mode) })
	}
}

func testFaultCorruptWrite(t *testing.T, mode copyengine.VerifyMode) {
	t.Run("every write", func(t *testing.T) {
		src, files := faultTree(t)
		dst := filepath.Join(scratchDir(t), "dst")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpWrite, PathHas: "victim", Corrupt: true})
		var ev events
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever, Verify: mode, OnEvent: ev.record}, faults))
		if !errors.Is(err, copyengine.ErrMismatch) {
			t.Errorf("Run returned %v, want ErrMismatch", err)
		}
		if sum.Mismatches != 1 {
			t.Errorf("%d mismatches, want 1", sum.Mismatches)
		}
		onlyVictimFailed(t, src, dst, sum, "verification failed")
		want := verify.Hex(verify.Bytes(files["victim"]))
		var mm *copyengine.MismatchError
		if e := ev.failures()["victim"]; !errors.As(e, &mm) {
			t.Fatalf("the victim failed with %v, want a *MismatchError", e)
		}
		if mm.Path != "victim" || mm.Want != want || mm.Got == want || len(mm.Got) != len(want) {
			t.Errorf("mismatch %+v; want path victim, source digest %s and a different read-back digest", mm, want)
		}
		if msg := sum.Failures[0].Err; !strings.Contains(msg, mm.Want) || !strings.Contains(msg, mm.Got) {
			t.Errorf("failure %q does not give both digests", msg)
		}
	})

	t.Run("first write", func(t *testing.T) {
		src, _ := faultTree(t)
		dst := filepath.Join(scratchDir(t), "dst")
		corrupt := &fileio.Fault{Op: fileio.OpWrite, PathHas: "victim", Corrupt: true, Nth: 1}
		var st copyengine.Stats
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever, Verify: mode, Stats: &st}, fileio.NewFaultSet(corrupt)))
		if err != nil {
			t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
		}
		if corrupt.Calls() == 0 {
			t.Fatal("no write of the victim matched the fault: it did not reach the run")
		}
		if sum.Mismatches != 0 || sum.Copied != 4 || sum.Verified != 4 {
			t.Errorf("mismatches %d, copied %d, verified %d; want the retry to succeed", sum.Mismatches, sum.Copied, sum.Verified)
		}
		// The recopied file counts once in the live counters too.
		if got := st.BytesVerified.Load(); got != sum.VerifiedBytes {
			t.Errorf("live counter: %d bytes verified, summary %d", got, sum.VerifiedBytes)
		}
		sameTree(t, src, dst)
	})
}

// TestFaultCreateNth fails the creation of the fourth file with ENOSPC,
// whichever file that is: the destination is full, the run stops there
// with one failure, keeps what it placed and starts nothing more.
func TestFaultCreateNth(t *testing.T) {
	t.Parallel()
	src := filepath.Join(scratchDir(t), "src")
	for i := 0; i < 10; i++ {
		writeFile(t, filepath.Join(src, fmt.Sprintf("f%d", i)), pattern(int64(30+i), 1000*i+1))
	}
	dst := filepath.Join(scratchDir(t), "dst")
	full := &fileio.Fault{Op: fileio.OpCreate, Nth: 4, Err: syscall.ENOSPC}
	faults := fileio.NewFaultSet(full)
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1}, faults))
	if !errors.Is(err, copyengine.ErrSomeFailed) || !errors.As(err, new(*copyengine.DestFullError)) {
		t.Errorf("Run returned %v, want a full destination (ErrSomeFailed)", err)
	}
	if sum.Failed != 1 || len(sum.Failures) != 1 {
		t.Fatalf("copied %d, failures %v; want one file failed", sum.Copied, sum.Failures)
	}
	if n := full.Calls(); n != 4 {
		t.Errorf("%d creations on the destination; want none after the fourth failed", n)
	}
	f := sum.Failures[0]
	if !strings.Contains(f.Err, "no space left on device") {
		t.Errorf("failure of %s reads %q", f.Path, f.Err)
	}
	if _, err := os.Lstat(filepath.Join(dst, f.Path)); err == nil {
		t.Errorf("%s exists though its creation failed", f.Path)
	}
	noTemps(t, dst)
	if n := finalFilesMatch(t, src, dst); int64(n) != sum.Copied {
		t.Errorf("%d files in place, the summary says %d copied", n, sum.Copied)
	}
}

// TestFaultSync fails the flush to stable storage: no file of the batch may
// take its name (its durability is unknown), none is left as a temporary.
func TestFaultSync(t *testing.T) {
	t.Parallel()
	t.Run("every flush", func(t *testing.T) {
		src, _ := faultTree(t)
		dst := filepath.Join(scratchDir(t), "dst")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpSync, Err: syscall.EIO})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
		if err == nil || !errors.Is(err, syscall.EIO) {
			t.Errorf("Run returned %v, want an error that wraps EIO", err)
		}
		if sum.Failed != 4 || sum.Copied != 0 {
			t.Errorf("failed %d, copied %d; want all 4 failed", sum.Failed, sum.Copied)
		}
		for _, f := range sum.Failures {
			if !strings.Contains(f.Err, "stable storage") || !strings.Contains(f.Err, "input/output error") {
				t.Errorf("failure of %s reads %q", f.Path, f.Err)
			}
		}
		noTemps(t, dst)
		if n := finalFilesMatch(t, src, dst); n != 0 {
			t.Errorf("%d files took their names though they were never flushed", n)
		}
	})

	t.Run("first flush", func(t *testing.T) {
		src, _ := faultTree(t)
		dst := filepath.Join(scratchDir(t), "dst")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpSync, Err: syscall.EIO, Nth: 1})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
		if !errors.Is(err, copyengine.ErrSomeFailed) || sum.Failed == 0 {
			t.Errorf("Run returned %v with %d failed, want ErrSomeFailed", err, sum.Failed)
		}
		noTemps(t, dst)
		finalFilesMatch(t, src, dst)
		if sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil {
			t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
		}
		sameTree(t, src, dst)
	})
}

// TestFaultClone makes FICLONE fail on a filesystem that can clone. A
// "cannot clone here" error falls back to copying the data, and the copy is
// correct and shares nothing; --reflink always fails instead; any other
// error fails the file without pretending --reflink always was asked for.
func TestFaultClone(t *testing.T) {
	t.Parallel()
	fs := loopfs.Mount(t, reflinkFilesystems[0])
	src := fs.Path("src")
	files := map[string][]byte{"a": pattern(40, 300000), "victim": pattern(41, 2<<20+1)}
	writeFiles(t, src, files)
	for _, errno := range []syscall.Errno{syscall.ENOTSUP, syscall.EXDEV} {
		t.Run("fallback "+errno.Error(), func(t *testing.T) {
			dst := fs.Path("dst-" + strings.ReplaceAll(errno.Error(), " ", "-"))
			faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpClone, Err: errno})
			sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkAuto}, faults))
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if sum.Copied != 2 || sum.Cloned != 0 || sum.Verified != 2 {
				t.Errorf("copied %d, cloned %d, verified %d; want 2 plain copies, verified", sum.Copied, sum.Cloned, sum.Verified)
			}
			for rel := range files {
				if shared, _ := extentBytes(t, filepath.Join(dst, rel)); shared != 0 {
					t.Errorf("%s shares %d bytes though cloning failed", rel, shared)
				}
			}
			sameTree(t, src, dst)
		})
	}

	t.Run("always", func(t *testing.T) {
		dst := fs.Path("dst-always")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpClone, PathHas: "victim", Err: syscall.ENOTSUP})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkAlways}, faults))
		if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 || sum.Failures[0].Path != "victim" {
			t.Fatalf("Run: %v, failures %v; want the victim to fail", err, sum.Failures)
		}
		if msg := sum.Failures[0].Err; !strings.Contains(msg, "--reflink=always") || !strings.Contains(msg, "not supported") {
			t.Errorf("failure reads %q", msg)
		}
		if sum.Cloned != 1 {
			t.Errorf("cloned %d, want the other file cloned", sum.Cloned)
		}
		noTemps(t, dst)
	})

	t.Run("hard error under auto", func(t *testing.T) {
		dst := fs.Path("dst-eio")
		faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpClone, PathHas: "victim", Err: syscall.EIO})
		sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkAuto}, faults))
		if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 || sum.Failures[0].Path != "victim" {
			t.Fatalf("Run: %v, failures %v; want the victim to fail", err, sum.Failures)
		}
		msg := sum.Failures[0].Err
		if !strings.Contains(msg, "input/output error") || strings.Contains(msg, "--reflink=always") {
			t.Errorf("failure reads %q; want the I/O error, and no mention of a --reflink=always that was not given", msg)
		}
		noTemps(t, dst)
	})
}

// TestFaultNoSyncfs runs where the destination has no filesystem-wide flush
// that waits (darwin, FreeBSD, Windows without admin rights): syncfs says
// "not supported", and the run must flush each file and each directory
// instead and succeed, not fail at its final flush.
func TestFaultNoSyncfs(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	writeFile(t, filepath.Join(src, "a"), pattern(1, 5000))
	writeFile(t, filepath.Join(src, "sub", "b"), pattern(2, 7000))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	nosyncfs := &fileio.Fault{Op: fileio.OpSyncfs, PathIs: dst, Err: syscall.ENOTSUP}
	faults := fileio.NewFaultSet(nosyncfs)
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if nosyncfs.Calls() == 0 {
		t.Fatal("the run never asked for a filesystem-wide flush: the fault did not reach it")
	}
	if sum.Copied != 2 || sum.Verified != 2 {
		t.Fatalf("copied %d, verified %d; want 2, 2", sum.Copied, sum.Verified)
	}
	for name, want := range map[string][]byte{"a": pattern(1, 5000), "sub/b": pattern(2, 7000)} {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: wrong content (%v)", name, err)
		}
	}
}

// TestFaultNoSyncfsFileFlushFails: where each file is flushed on its own, a
// file whose flush fails is reported once, its temporary removed, and the
// rest of its batch still committed.
func TestFaultNoSyncfsFileFlushFails(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	writeFile(t, filepath.Join(src, "a"), pattern(1, 5000))
	writeFile(t, filepath.Join(src, "b"), pattern(2, 7000))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	faults := fileio.NewFaultSet(
		&fileio.Fault{Op: fileio.OpSyncfs, PathIs: dst, Err: syscall.ENOTSUP},
		&fileio.Fault{Op: fileio.OpSync, PathHas: ".b.fastcopy-tmp", Err: syscall.EIO},
	)
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatalf("Run: %v; want ErrSomeFailed", err)
	}
	if sum.Copied != 1 || sum.Failed != 1 || len(sum.Failures) != 1 || sum.Failures[0].Path != "b" {
		t.Fatalf("copied %d, failed %d (%v); want a copied and b failed once", sum.Copied, sum.Failed, sum.Failures)
	}
	if !strings.Contains(sum.Failures[0].Err, "flushing to stable storage") {
		t.Errorf("failure reads %q; want the flush named", sum.Failures[0].Err)
	}
	if got, err := os.ReadFile(filepath.Join(dst, "a")); err != nil || !bytes.Equal(got, pattern(1, 5000)) {
		t.Errorf("a: wrong content (%v)", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "b")); !os.IsNotExist(err) {
		t.Errorf("b is in place after its flush failed (%v)", err)
	}
	noTemps(t, dst)
}

// TestFaultModeSetOnlyWhenNeeded: a plain file's copy is created with its
// owner and mode, so neither is set after (a failing chmod or chown is
// never reached); under a default ACL the mode is set, and its failure is
// reported.
func TestFaultModeSetOnlyWhenNeeded(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	writeFile(t, filepath.Join(src, "a"), pattern(1, 5000))
	faults := fileio.NewFaultSet(
		&fileio.Fault{Op: fileio.OpChmod, PathHas: "fastcopy-tmp", Err: syscall.EIO},
		&fileio.Fault{Op: fileio.OpChown, PathHas: "fastcopy-tmp", Err: syscall.EIO},
	)
	dst := filepath.Join(scr, "plain")
	if sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults)); err != nil {
		t.Fatalf("Run into a plain directory: %v (failures %v); the mode or owner was set although creation gave it", err, sum.Failures)
	}
	checkModes(t, dst, map[string]os.FileMode{"a": 0o644})

	dst = filepath.Join(scr, "acl")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(dst, "system.posix_acl_default", defaultACL(), 0); err != nil {
		t.Skipf("skipped the default-ACL half: %s takes no default ACL: %v", dst, err)
	}
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
	if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 || !strings.Contains(sum.Failures[0].Err, "setting mode") {
		t.Fatalf("Run under a default ACL: %v, failures %v; want the mode set (and its injected failure reported)", err, sum.Failures)
	}
}

// TestFaultPrefetchOpensAhead checks the look-ahead of the copy workers:
// each small source is opened once, its read is requested before the files
// before it are written (16 entries ahead of the one being copied), and
// files that are empty or larger than 1 MiB are not asked for.
func TestFaultPrefetchOpensAhead(t *testing.T) {
	t.Parallel()
	for _, verifyMode := range []copyengine.VerifyMode{copyengine.VerifyOff, copyengine.VerifyDevice} {
		t.Run(string(verifyMode), func(t *testing.T) {
			scr := scratchDir(t)
			src := filepath.Join(scr, "src")
			// In a directory of their own, so that the first chunk holds
			// small files only.
			writeFile(t, filepath.Join(src, "sub", "big"), pattern(99, 2<<20))
			writeFile(t, filepath.Join(src, "sub", "empty"), nil)
			const small = 40
			writeSmallFiles(t, src, small, flatName)

			opens := &fileio.Fault{Op: fileio.OpOpen, PathHas: src + string(filepath.Separator)}
			prefetches := &fileio.Fault{Op: fileio.OpPrefetch, PathHas: src + string(filepath.Separator)}
			askedAtFirstWrite := -1
			// The temporary of the first small file written (the chunk of sub/
			// may come first).
			firstCreate := &fileio.Fault{Op: fileio.OpCreate, PathHas: string(filepath.Separator) + ".f", Nth: 1, Then: func() { askedAtFirstWrite = prefetches.Calls() }}
			faults := fileio.NewFaultSet(opens, prefetches, firstCreate)

			copyCounting(t, src, filepath.Join(scr, "dst"), verifyMode, faults, opens, small+2, prefetches, small,
				"sources (each once: the copy uses the descriptor opened ahead)", "the small files, not the empty or 2 MiB one")
			if want := 17; askedAtFirstWrite != want {
				t.Errorf("when the first file was created, %d reads had been asked for, want %d (it and the 16 after it)", askedAtFirstWrite, want)
			}
		})
	}
}

// copyCounting copies src to dst with one worker and no dedup under the
// faults (among them opens and prefetches), checks the copy, and checks the calls that opens and
// prefetches counted: the files opened (opened says which) and the reads
// asked for ahead (asked says which). It reads in listing order, whose
// look-ahead these count: disk order opens each file once more during the
// walk (FIEMAP) and asks further ahead (readorder_fault_linux_test.go).
func copyCounting(t *testing.T, src, dst string, mode copyengine.VerifyMode, faults *fileio.FaultSet, opens *fileio.Fault, wantOpens int, prefetches *fileio.Fault, wantAhead int, opened, asked string) {
	t.Helper()
	if _, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1, Verify: mode, Dedup: dedup.Off, ReadOrder: copyengine.ReadOrderListing}, faults)); err != nil {
		t.Fatal(err)
	}
	sameTree(t, src, dst)
	if got := opens.Calls(); got != wantOpens {
		t.Errorf("%s opened %d times, want %d", opened, got, wantOpens)
	}
	if got := prefetches.Calls(); got != wantAhead {
		t.Errorf("reads asked for ahead: %d, want %d (%s)", got, wantAhead, asked)
	}
}

// TestFaultReadBackAhead checks the look-ahead of the read-back with
// --verify=device: each small temporary is opened once for its read-back,
// and every file of a worker's group (40 files over 8 workers: 5) is asked
// for from the device before the first of them is hashed and renamed.
func TestFaultReadBackAhead(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src := filepath.Join(scr, "src")
	writeFile(t, filepath.Join(src, "big"), pattern(99, 2<<20))
	const small = 40
	writeSmallFiles(t, src, small, flatName)

	dst := filepath.Join(scr, "dst")
	tmp := ".fastcopy-tmp"
	opens := &fileio.Fault{Op: fileio.OpOpen, PathHas: tmp}
	prefetches := &fileio.Fault{Op: fileio.OpPrefetch, PathHas: tmp}
	askedAtFirstRename := -1
	firstRename := &fileio.Fault{Op: fileio.OpRename, PathHas: dst, Nth: 1, Then: func() { askedAtFirstRename = prefetches.Calls() }}
	faults := fileio.NewFaultSet(opens, prefetches, firstRename)
	copyCounting(t, src, dst, copyengine.VerifyDevice, faults, opens, small+1, prefetches, small,
		"temporaries (each once, for its read-back)", "the small files, not the 2 MiB one")
	if askedAtFirstRename < 5 {
		t.Errorf("when the first file was renamed into place, %d read-backs had been asked for, want at least 5 (its group)", askedAtFirstRename)
	}
}

// TestFaultCacheReadBackByWorker checks that --verify=cache reads a file
// written by read/write back through the descriptor it was written with,
// right after the write: no temporary is opened again, and every file
// still counts as verified.
func TestFaultCacheReadBackByWorker(t *testing.T) {
	t.Parallel()
	src, _ := faultTree(t)
	dst := filepath.Join(scratchDir(t), "dst")
	reopened := &fileio.Fault{Op: fileio.OpOpen, PathHas: ".fastcopy-tmp"}
	created := &fileio.Fault{Op: fileio.OpCreate, PathHas: ".fastcopy-tmp"} // shows the faults reach the run
	faults := fileio.NewFaultSet(reopened, created)
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever, Verify: copyengine.VerifyCache}, faults))
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	sameTree(t, src, dst)
	if sum.Verified != 4 || sum.VerifiedBytes != sum.Bytes {
		t.Errorf("verified %d files, %d bytes; want 4, %d", sum.Verified, sum.VerifiedBytes, sum.Bytes)
	}
	if created.Calls() < 4 {
		t.Errorf("%d temporaries created as the faults saw it; want 4: the faults did not reach the run", created.Calls())
	}
	if n := reopened.Calls(); n != 0 {
		t.Errorf("temporaries opened %d times for their read-back; want none (read through the write descriptor)", n)
	}
}
