//go:build fcfault

package copyengine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Resuming, in process: a run is cancelled while it writes a large file
// (the Nth read of its source cancels it), and the next run takes up the
// temporary it kept. Sizes are scaled down (resumeMin lowered) to keep the
// tests quick; the large file sits in a new directory, which a run with
// such a file does not stage (a staged directory is removed whole by the
// next run).

const (
	resumeSize  = 40 << 20
	resumeMinIn = 8 << 20
)

// resumeOpts is opt with the resume minimum lowered to resumeMinIn.
func resumeOpts(opt copyengine.Options) copyengine.Options {
	return copyengine.WithResumeMin(opt, resumeMinIn)
}

// interruptedCopy copies src (holding sub/big, resumeSize bytes) to dst and
// cancels the run at the cutAt'th read of sub/big, then returns the
// temporary left in dst and the source's content.
func interruptedCopy(t *testing.T, src, dst string, cutAt int) (tmp string, data []byte) {
	t.Helper()
	data = pattern(77, resumeSize)
	writeFile(t, filepath.Join(src, "sub", "big"), data)
	writeFile(t, filepath.Join(src, "sub", "small"), pattern(78, 1000))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cut := &fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "sub", "big"), Nth: cutAt, Then: cancel}
	faults := fileio.NewFaultSet(cut)
	_, err := copyengine.Run(ctx, copyengine.WithFaults(resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst}), faults))
	if !errors.Is(err, context.Canceled) || cut.Calls() < cutAt {
		t.Fatalf("first run: %v after %d reads of the large file; want it cancelled at read %d", err, cut.Calls(), cutAt)
	}
	tmp = filepath.Join(dst, "sub", ".big"+tempSuffix)
	st, err := os.Lstat(tmp)
	if err != nil || st.Size() == 0 {
		t.Fatalf("the cancelled run kept no temporary of the large file to resume: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "sub", "big")); err == nil {
		t.Fatal("the large file is under its final name after a cancelled run")
	}
	return tmp, data
}

// resumeRun reruns the copy (with faults, nil for none) and returns its
// summary, the bytes it wrote and where the large file was resumed (-1: it
// was not).
func resumeRun(t *testing.T, src, dst string, faults *fileio.FaultSet) (sum copyengine.Summary, written, at int64) {
	t.Helper()
	settleSources() // the sources were written just now
	var ev events
	stats := &copyengine.Stats{}
	sum, err := runEngine(t, copyengine.WithFaults(resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst, Stats: stats, OnEvent: ev.record}), faults))
	if err != nil || sum.Failed != 0 {
		t.Fatalf("rerun: %v, failures %v", err, sum.Failures)
	}
	at = -1
	for _, e := range ev.all {
		if e.Action == copyengine.ActResume {
			if e.Path != "sub/big" || at >= 0 {
				t.Errorf("resume event for %q (at %d); want one, for sub/big", e.Path, e.Resumed)
			}
			at = e.Resumed
		}
	}
	t.Logf("rerun: resumed at %d, wrote %d bytes", at, stats.BytesWritten.Load())
	return sum, stats.BytesWritten.Load(), at
}

func sameContent(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, not its source's %d", path, len(got), len(want))
	}
}

// TestResumeAfterCancel: the rerun writes only what the first run did not,
// says where it resumed, and the file is complete.
func TestResumeAfterCancel(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	tmp, data := interruptedCopy(t, src, dst, 16)
	st, _ := os.Stat(tmp)
	sum, written, at := resumeRun(t, src, dst, nil)
	if at <= 0 || at > st.Size() {
		t.Fatalf("resumed at %d; want within the %d bytes the first run left", at, st.Size())
	}
	if want := int64(resumeSize) - at; written != want+1000 {
		t.Errorf("the rerun wrote %d bytes; want the %d past the resume point and the small file's 1000", written, want)
	}
	if sum.Resumed != 1 || sum.BytesResumed != at {
		t.Errorf("summary: %d resumed, %d bytes; want 1 and %d", sum.Resumed, sum.BytesResumed, at)
	}
	if sum.Verified != 2 {
		t.Errorf("%d files verified; want both", sum.Verified)
	}
	sameContent(t, filepath.Join(dst, "sub", "big"), data)
	noTemps(t, dst)
}

// TestResumeCorruptPrefix: a byte flipped inside the kept prefix moves the
// resume point to before it; the file is still copied right.
func TestResumeCorruptPrefix(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	tmp, data := interruptedCopy(t, src, dst, 24)
	st, _ := os.Stat(tmp)
	flip := st.Size() / 2
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte{data[flip] ^ 0x5a}
	if _, err := f.WriteAt(b, flip); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, written, at := resumeRun(t, src, dst, nil)
	// The source is compared in the pieces it is read in (1 MiB): the
	// resume point is the start of the piece with the flipped byte.
	if at > flip || at <= flip-1<<20 {
		t.Fatalf("resumed at %d; want the start of the 1 MiB piece holding the flipped byte at %d", at, flip)
	}
	if written != int64(resumeSize)-max(at, 0)+1000 {
		t.Errorf("the rerun wrote %d bytes; resumed at %d", written, at)
	}
	sameContent(t, filepath.Join(dst, "sub", "big"), data)
	noTemps(t, dst)
}

// TestResumeNotThrough: a temporary replaced by a symlink, or by a hard
// link to another file, is neither followed nor written through, nor taken
// up, though what it leads to holds the very bytes of the source: the file
// is copied whole. The name is another inode than the one the run made and
// recorded, so it is not the run's to remove (internal/made): it is left alone.
func TestResumeNotThrough(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"symlink", "hardlink"} {
		t.Run(kind, func(t *testing.T) {
			scr := scratchDir(t)
			src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
			tmp, data := interruptedCopy(t, src, dst, 16)
			outside := filepath.Join(scr, "outside")
			writeFile(t, outside, data[:30<<20])
			if err := os.Remove(tmp); err != nil {
				t.Fatal(err)
			}
			link := os.Symlink
			if kind == "hardlink" {
				link = os.Link
			}
			if err := link(outside, tmp); err != nil {
				t.Fatal(err)
			}
			_, written, at := resumeRun(t, src, dst, nil)
			if at >= 0 {
				t.Errorf("resumed at %d through a %s", at, kind)
			}
			if written != resumeSize+1000 {
				t.Errorf("the rerun wrote %d bytes; want the whole file", written)
			}
			sameContent(t, outside, data[:30<<20])
			sameContent(t, filepath.Join(dst, "sub", "big"), data)
			if _, err := os.Lstat(tmp); err != nil {
				t.Errorf("the %s in the temporary's place, not the run's, was removed: %v", kind, err)
			}
			noErr(t, os.Remove(tmp))
			noTemps(t, dst)
		})
	}
}

// TestResumeNotOthers: a temporary owned by another user is not taken up
// (that user could still be writing it).
func TestResumeNotOthers(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipping: giving a file to another user needs root")
	}
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	tmp, data := interruptedCopy(t, src, dst, 16)
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, written, at := resumeRun(t, src, dst, nil)
	if at >= 0 || written != resumeSize+1000 {
		t.Errorf("resumed at %d, wrote %d bytes: a temporary of another owner was taken up", at, written)
	}
	sameContent(t, filepath.Join(dst, "sub", "big"), data)
	noTemps(t, dst)
}

// TestResumeLeftoverOfUnchanged: a kept temporary of a file that needs no
// copy after all is removed like any leftover.
func TestResumeLeftoverOfUnchanged(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	data := pattern(79, resumeSize)
	writeFile(t, filepath.Join(src, "big"), data)
	if _, err := runEngine(t, resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst})); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dst, ".big"+tempSuffix), data[:1<<20])
	tempproofRecordKept(t, dst, ".big"+tempSuffix) // an interrupted run's
	sum, err := runEngine(t, resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst}))
	if err != nil || sum.Skipped != 1 || sum.TempsRemoved != 1 {
		t.Fatalf("rerun: %v, %d skipped, %d temporaries removed; want 1 and 1", err, sum.Skipped, sum.TempsRemoved)
	}
	noTemps(t, dst)
}

// TestNoResume: --no-resume neither keeps the temporary of a cancelled
// copy nor takes one up.
func TestNoResume(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	tmp, data := interruptedCopy(t, src, dst, 16)
	var ev events
	stats := &copyengine.Stats{}
	sum, err := runEngine(t, resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst, NoResume: true, Stats: stats, OnEvent: ev.record}))
	if err != nil || sum.Resumed != 0 || stats.BytesWritten.Load() != resumeSize+1000 || sum.TempsRemoved != 1 {
		t.Fatalf("--no-resume rerun: %v, %d resumed, %d bytes written, %d temporaries removed; want 0, the whole file, 1", err, sum.Resumed, stats.BytesWritten.Load(), sum.TempsRemoved)
	}
	sameContent(t, filepath.Join(dst, "sub", "big"), data)
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "sub", "big"), Nth: 16, Then: cancel})
	_, err = copyengine.Run(ctx, copyengine.WithFaults(resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst, NoResume: true}), faults))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled --no-resume run: %v", err)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("a cancelled --no-resume run kept %s: %v", tmp, err)
	}
}

// TestResumeFileRoot: a file named on the command line is resumed too (no
// listing of its directory keeps the temporary: the copy finds it), and a
// symlink in the temporary's place is neither followed nor removed there:
// it is not a leftover of fastcopy's, so the file fails.
func TestResumeFileRoot(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"resume", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			scr := scratchDir(t)
			data := pattern(80, resumeSize)
			src, dst := filepath.Join(scr, "big"), filepath.Join(scr, "dst")
			writeFile(t, src, data)
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathIs: src, Nth: 16, Then: cancel})
			_, err := copyengine.Run(ctx, copyengine.WithFaults(resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst}), faults))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v; want it cancelled", err)
			}
			tmp := filepath.Join(dst, ".big"+tempSuffix)
			if _, err := os.Lstat(tmp); err != nil {
				t.Fatalf("the cancelled run kept no temporary: %v", err)
			}
			outside := filepath.Join(scr, "outside")
			if kind == "symlink" {
				writeFile(t, outside, data[:30<<20])
				if err := os.Remove(tmp); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, tmp); err != nil {
					t.Fatal(err)
				}
			}
			settleSources() // the source was written just now
			var ev events
			stats := &copyengine.Stats{}
			sum, err := runEngine(t, resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst, Stats: stats, OnEvent: ev.record}))
			if kind == "symlink" {
				// A symlink under the temporary's name is no leftover of
				// fastcopy's: the file fails by name and the symlink, and
				// what it points to, are left alone.
				if sum.Failed != 1 || sum.Resumed != 0 || stats.BytesWritten.Load() != 0 {
					t.Fatalf("rerun over a symlinked temporary: %v, %d failed, %d resumed, %d bytes written; want the file failed, nothing written", err, sum.Failed, sum.Resumed, stats.BytesWritten.Load())
				}
				if fi, err := os.Lstat(tmp); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the symlink in the temporary's place was not left alone: %v", err)
				}
				sameContent(t, outside, data[:30<<20])
				return
			}
			if err != nil || sum.Failed != 0 {
				t.Fatalf("rerun: %v, failures %v", err, sum.Failures)
			}
			written := stats.BytesWritten.Load()
			t.Logf("rerun: %d resumed (%d bytes), wrote %d bytes", sum.Resumed, sum.BytesResumed, written)
			if kind == "resume" && (sum.Resumed != 1 || sum.BytesResumed == 0 || written != resumeSize-sum.BytesResumed) {
				t.Errorf("not resumed, or more written than the rest")
			}
			sameContent(t, filepath.Join(dst, "big"), data)
			noTemps(t, dst)
		})
	}
}

// TestResumeWritten: a run stopped after the large file was written, while
// it is flushed for its read-back, keeps it too; the rerun finds all of it
// equal to the source, writes nothing, and still reads it back. The kept
// file has its final mode, setuid here: while the rerun has it open for
// writing it is private again (0600), as a new temporary is.
func TestResumeWritten(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	data := pattern(81, resumeSize)
	writeFile(t, filepath.Join(src, "big"), data)
	if err := syscall.Chmod(filepath.Join(src, "big"), 0o4755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpSyncfs, Nth: 1, Then: cancel})
	_, err := copyengine.Run(ctx, copyengine.WithFaults(resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst}), faults))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v; want it cancelled", err)
	}
	if st, err := os.Lstat(filepath.Join(dst, ".big"+tempSuffix)); err != nil || st.Size() != resumeSize {
		t.Fatalf("the cancelled run did not keep the written file's temporary: %v", err)
	}
	tmp := filepath.Join(dst, ".big"+tempSuffix)
	var during os.FileMode
	faults = fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "big"), Nth: 20, Then: func() {
		if st, err := os.Lstat(tmp); err == nil {
			during = st.Mode()
		}
	}})
	stats := &copyengine.Stats{}
	sum, err := runEngine(t, copyengine.WithFaults(resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst, Stats: stats}), faults))
	if err != nil || sum.Resumed != 1 || sum.BytesResumed != resumeSize || stats.BytesWritten.Load() != 0 || sum.Verified != 1 {
		t.Fatalf("rerun: %v, %d resumed at %d, %d bytes written, %d verified; want the whole file resumed, nothing written, 1 verified", err, sum.Resumed, sum.BytesResumed, stats.BytesWritten.Load(), sum.Verified)
	}
	if during.Perm() != 0o600 || during&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("the temporary had mode %v while the rerun had it open for writing; want 0600", during)
	}
	sameContent(t, filepath.Join(dst, "big"), data)
	if st, err := os.Lstat(filepath.Join(dst, "big")); err != nil || st.Mode()&os.ModeSetuid == 0 || st.Mode().Perm() != 0o755 {
		t.Errorf("the copy's mode is not its source's 4755: %v", st.Mode())
	}
	noTemps(t, dst)
}

// TestResumeTamperedAfterCompare: a writer of the destination changes the
// temporary's prefix after the rerun has compared it with the source (a
// writer holding it open could). The prefix is not trusted for having
// compared equal: the read-back of the whole file finds the change, and
// the file is copied again.
func TestResumeTamperedAfterCompare(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	tmp, data := interruptedCopy(t, src, dst, 16)
	tamper := func() {
		f, err := os.OpenFile(tmp, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte{data[1<<20+7] ^ 0xff}, 1<<20+7); err != nil {
			t.Error(err)
		}
	}
	// The third read of the source is of its third MiB: the first two
	// have been compared with the temporary, equal.
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "sub", "big"), Nth: 3, Then: tamper})
	sum, written, at := resumeRun(t, src, dst, faults)
	if at <= 1<<20 {
		t.Fatalf("resumed at %d; the test means to change a byte the rerun compared", at)
	}
	if written <= resumeSize {
		t.Errorf("the rerun wrote %d bytes: the changed file was not copied again", written)
	}
	if sum.Verified != 2 {
		t.Errorf("%d files verified; want 2", sum.Verified)
	}
	sameContent(t, filepath.Join(dst, "sub", "big"), data)
	noTemps(t, dst)
}

// TestLeftoverOfSmallFileRewritten: the leftover temporary of a file too
// small to resume, whose file is copied again, is removed before the copy
// writes a fresh temporary of the same name, never while it does. Here the
// first removal of that name waits (a second at most) for the copy to be
// reading its source, its fresh temporary made; the copy then waits (a
// second at most) for something to remove that temporary.
func TestLeftoverOfSmallFileRewritten(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	data := pattern(82, 5000)
	writeFile(t, filepath.Join(src, "small"), data)
	writeFile(t, filepath.Join(dst, "small"), pattern(83, 4000))
	tmp := filepath.Join(dst, ".small"+tempSuffix)
	writeFile(t, tmp, data[:3000])
	tempproofRecordKept(t, dst, ".small"+tempSuffix) // an interrupted run's
	reading := make(chan struct{})
	removed := &fileio.Fault{Op: fileio.OpRemove, PathIs: tmp, Nth: 1, Then: func() {
		select {
		case <-reading:
		case <-time.After(time.Second):
		}
	}}
	read := &fileio.Fault{Op: fileio.OpRead, PathIs: filepath.Join(src, "small"), Nth: 1, Then: func() {
		close(reading)
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
			if _, err := os.Lstat(tmp); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}}
	faults := fileio.NewFaultSet(removed, read)
	// No dedup: it would read the source before the temporary is made.
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: dedup.Off}, faults))
	if err != nil || sum.Failed != 0 || sum.Copied != 1 {
		t.Fatalf("run: %v, %d copied, failures %v; want 1 copied, no failure", err, sum.Copied, sum.Failures)
	}
	if removed.Calls() == 0 || read.Calls() == 0 {
		t.Fatalf("the leftover removed %d times, the source read %d times, as the faults saw it: they did not reach the run", removed.Calls(), read.Calls())
	}
	// Read once and read back once: a temporary removed under the copy
	// fails its read-back and is copied again.
	if sum.BytesRead != 2*5000 {
		t.Errorf("%d bytes read; want the source and its read-back, 10000", sum.BytesRead)
	}
	sameContent(t, filepath.Join(dst, "small"), data)
	noTemps(t, dst)
}

// TestResumeLeftoverOfEqual: so is one of a file that is found equal by
// its digest (--checksum; same size, another mtime) rather than by its
// stat.
func TestResumeLeftoverOfEqual(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	data := pattern(84, resumeSize)
	writeFile(t, filepath.Join(src, "big"), data)
	writeFile(t, filepath.Join(dst, "big"), data)
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dst, "big"), old, old); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dst, ".big"+tempSuffix), data[:1<<20])
	tempproofRecordKept(t, dst, ".big"+tempSuffix) // an interrupted run's
	settleSources()
	sum, err := runEngine(t, resumeOpts(copyengine.Options{Sources: []string{src}, Dest: dst, Checksum: true}))
	if err != nil || sum.Copied != 0 || sum.TempsRemoved != 1 {
		t.Fatalf("run: %v, %d copied, %d temporaries removed; want 0 and 1", err, sum.Copied, sum.TempsRemoved)
	}
	noTemps(t, dst)
}

// TestResumeNotWithXattrs: a temporary carrying an extended attribute (an
// ACL is one) is not taken up: the copy only adds the source's attributes,
// so the finished file would keep one the source does not have.
func TestResumeNotWithXattrs(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	tmp, data := interruptedCopy(t, src, dst, 16)
	if err := windowsSetxattr(tmp, "user.stale", []byte("1")); err != nil {
		t.Skipf("skipping: the scratch filesystem takes no user xattr: %v", err)
	}
	_, written, at := resumeRun(t, src, dst, nil)
	if at >= 0 || written != resumeSize+1000 {
		t.Errorf("resumed at %d, wrote %d bytes: a temporary carrying user.stale was taken up", at, written)
	}
	final := filepath.Join(dst, "sub", "big")
	sameContent(t, final, data)
	if n, err := windowsGetxattr(final, "user.stale", make([]byte, 16)); err == nil {
		t.Errorf("the copy carries user.stale (%d bytes), which its source does not have", n)
	}
	noTemps(t, dst)
}
