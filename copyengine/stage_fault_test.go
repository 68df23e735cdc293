//go:build fcfault && linux

package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// stagedSource writes, in a scratch directory, a source tree with a new
// directory of small files and a subdirectory of its own: src/top.txt,
// src/new/f00.., src/new/sub/f00... It returns the source and a
// destination that does not exist yet.
func stagedSource(t *testing.T) (src, dst string) {
	t.Helper()
	scr := scratchDir(t)
	src, dst = filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	writeFile(t, filepath.Join(src, "top.txt"), pattern(1, 100))
	for i := 0; i < 5; i++ {
		writeFile(t, filepath.Join(src, "new", flatName(i)), pattern(int64(i+2), 3000+i))
		writeFile(t, filepath.Join(src, "new", "sub", flatName(i)), pattern(int64(i+20), 5000+i))
	}
	return src, dst
}

// TestStagedDirHiddenUntilDone: the files of a directory the run creates
// are written under their own names inside its hidden temporary, which is
// renamed once, when they are all flushed and verified; until then the
// directory's own name does not exist (looked at when a file is created,
// when the batch is flushed and when a file is read back). Its
// subdirectory is staged inside it.
func TestStagedDirHiddenUntilDone(t *testing.T) {
	t.Parallel()
	src, dst := stagedSource(t)
	var early []string
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	// Each file's creation, each dir's rename, each per-file rename into new/.
	hiddenWhile := func(what string) func() {
		return func() {
			if exists(filepath.Join(dst, "new")) {
				early = append(early, "new exists "+what)
			}
		}
	}
	created := &fileio.Fault{Op: fileio.OpCreate, PathIs: filepath.Join(dst, ".new.fastcopy-tmp", "f03"), Then: hiddenWhile("while its file f03 is created")}
	flushed := &fileio.Fault{Op: fileio.OpSyncfs, Nth: 1, Then: hiddenWhile("when its files are first flushed")}
	readBack := &fileio.Fault{Op: fileio.OpOpen, PathIs: filepath.Join(dst, ".new.fastcopy-tmp", "f03"), Then: hiddenWhile("while its file f03 is read back")}
	subCreated := &fileio.Fault{Op: fileio.OpCreate, PathIs: filepath.Join(dst, ".new.fastcopy-tmp", ".sub.fastcopy-tmp", "f01")}
	subCreatedLate := &fileio.Fault{Op: fileio.OpCreate, PathIs: filepath.Join(dst, "new", ".sub.fastcopy-tmp", "f01")}
	fileRenames := &fileio.Fault{Op: fileio.OpRename, PathHas: filepath.Join(dst, "new") + "/f"}
	subFileRenames := &fileio.Fault{Op: fileio.OpRename, PathHas: "sub/f"}
	dirRename := &fileio.Fault{Op: fileio.OpRename, PathIs: filepath.Join(dst, "new")}
	topRename := &fileio.Fault{Op: fileio.OpRename, PathIs: filepath.Join(dst, "top.txt")}
	faults := fileio.NewFaultSet(created, flushed, readBack, subCreated, subCreatedLate, fileRenames, subFileRenames, dirRename, topRename)

	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 2}, faults))
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	for _, e := range early {
		t.Error(e)
	}
	if created.Calls() != 1 {
		t.Errorf("new/f03 was created under its own name in the hidden directory %d times, want 1", created.Calls())
	}
	if flushed.Calls() == 0 || readBack.Calls() != 1 {
		t.Errorf("%d flushes and %d read-back opens of new/f03 in the hidden directory, want some and 1", flushed.Calls(), readBack.Calls())
	}
	if n := subCreated.Calls() + subCreatedLate.Calls(); n != 1 {
		t.Errorf("new/sub/f01 was created under its own name in sub's hidden directory %d times, want 1", n)
	}
	if fileRenames.Calls() != 0 || subFileRenames.Calls() != 0 {
		t.Errorf("files of staged directories were renamed one by one: %d in new, %d in new/sub", fileRenames.Calls(), subFileRenames.Calls())
	}
	if dirRename.Calls() != 1 {
		t.Errorf("new was renamed into place %d times, want 1", dirRename.Calls())
	}
	if topRename.Calls() != 1 {
		t.Errorf("top.txt, in the destination root, was renamed into place %d times, want 1 (the root is not staged)", topRename.Calls())
	}
	if sum.Copied != 11 || sum.Dirs != 2 {
		t.Errorf("copied %d files and made %d directories, want 11 and 2", sum.Copied, sum.Dirs)
	}
	sameTree(t, src, dst)
	noTemps(t, dst)
}

// TestStagedDirLimit: a new directory with more files than a crash should
// cost is put in place as soon as it is listed, and its files take
// temporary names as they always did.
func TestStagedDirLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		files int
		bytes int64
	}{
		{"files", 4, 1 << 20}, // 5 files in each directory: over the limit
		{"bytes", 100, 10000}, // 5 files of 3 KB and more: over the limit
	} {
		t.Run(c.name, func(t *testing.T) {
			src, dst := stagedSource(t)
			var missing int
			// The directory handle keeps the path it was opened by, the
			// hidden one: the path tells nothing, the name does.
			created := &fileio.Fault{Op: fileio.OpCreate, PathHas: "/.f03.fastcopy-tmp", Then: func() {
				for _, d := range []string{"new", "new/sub"} {
					if _, err := os.Lstat(filepath.Join(dst, d)); err != nil {
						missing++
					}
				}
			}}
			fileRenames := &fileio.Fault{Op: fileio.OpRename, PathHas: "/f0"}
			faults := fileio.NewFaultSet(created, fileRenames)
			opt := copyengine.WithStageLimits(copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 2}, c.files, c.bytes)
			sum, err := runEngine(t, copyengine.WithFaults(opt, faults))
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if created.Calls() != 2 || missing != 0 {
				t.Errorf("the temporaries of new/f03 and new/sub/f03 were created %d times (want 2), their directories missing %d times then (want 0)", created.Calls(), missing)
			}
			if fileRenames.Calls() != 10 {
				t.Errorf("%d files renamed into place, want the 10 of new and new/sub", fileRenames.Calls())
			}
			sameTree(t, src, dst)
			noTemps(t, dst)
		})
	}
}

// rerunRemovesHidden reruns the copy without faults: it removes the one
// staged directory the faulty run left hidden and completes the copy.
func rerunRemovesHidden(t *testing.T, src, dst string) {
	t.Helper()
	if sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.TempsRemoved != 1 {
		t.Fatalf("rerun: %v, %d temporaries removed (want 1; failures %v)", err, sum.TempsRemoved, sum.Failures)
	}
	sameTree(t, src, dst)
	noTemps(t, dst)
}

// TestStagedDirBlocked: a staged directory that cannot be renamed into place
// is reported by name with what to do, is left hidden (no file shows under
// a final path), and the next run removes it and copies the directory.
func TestStagedDirBlocked(t *testing.T) {
	t.Parallel()
	src, dst := stagedSource(t)
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpRename, PathIs: filepath.Join(dst, "new"), Err: syscall.ENOTEMPTY})
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatalf("Run: %v, want ErrSomeFailed", err)
	}
	if len(sum.Failures) != 1 || sum.Failures[0].Path != "new" {
		t.Fatalf("failures %v, want one for new", sum.Failures)
	}
	t.Logf("reported: %s", sum.Failures[0].Err)
	if _, err := os.Lstat(filepath.Join(dst, "new")); err == nil {
		t.Error("new is under its own name although it could not be put in place")
	}
	if _, err := os.Lstat(filepath.Join(dst, ".new.fastcopy-tmp", "f00")); err != nil {
		t.Errorf("the hidden directory is not left as it was: %v", err)
	}
	finalFilesMatch(t, src, dst)

	rerunRemovesHidden(t, src, dst)
}

// TestStagedDirSpoiled: a file that fails in a staged directory and cannot
// be removed there (where it has its own name) keeps the whole directory
// out of sight: it is reported, and the next run removes it. The file
// fails in the worker (its write) or in the committer (it reads back
// wrong twice).
func TestStagedDirSpoiled(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		fault     fileio.Fault // on new/f02
		removeNth int          // the removal of f02 that fails (0: every one)
		err       error        // what Run returns
		short     bool         // the file left is half-written
	}{
		{"write fails", fileio.Fault{Op: fileio.OpWrite, Short: true, Err: syscall.EIO}, 0, copyengine.ErrSomeFailed, true},
		// The copy made again after the first mismatch removes the first
		// (removal 1); the one after the second mismatch fails.
		{"reads back wrong", fileio.Fault{Op: fileio.OpWrite, Corrupt: true}, 2, copyengine.ErrMismatch, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, dst := stagedSource(t)
			bad := filepath.Join(dst, ".new.fastcopy-tmp", "f02")
			f := c.fault
			f.PathIs = bad
			faults := fileio.NewFaultSet(&f, &fileio.Fault{Op: fileio.OpRemove, PathIs: bad, Nth: c.removeNth, Err: syscall.EROFS})
			sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
			if !errors.Is(err, c.err) {
				t.Fatalf("Run: %v, want %v", err, c.err)
			}
			failed := map[string]string{}
			for _, f := range sum.Failures {
				failed[f.Path] = f.Err
			}
			if _, ok := failed["new/f02"]; !ok || len(failed) != 2 || !strings.Contains(failed["new"], "could not remove") {
				t.Fatalf("failures %v, want new/f02 and new (could not remove)", sum.Failures)
			}
			if _, err := os.Lstat(filepath.Join(dst, "new")); err == nil {
				t.Fatal("new was put in place with a broken f02 in it")
			}
			if data, err := os.ReadFile(bad); err != nil || bytes.Equal(data, pattern(4, 3002)) || (len(data) < 3002) != c.short {
				t.Fatalf("f02 is not left broken where it was (%d bytes, %v): the test proves nothing", len(data), err)
			}
			finalFilesMatch(t, src, dst)

			rerunRemovesHidden(t, src, dst)
		})
	}
}

// TestStagedDirNameTaken: an empty directory made under the staged one's
// name while it is written is neither replaced nor merged into: the staged
// directory stays hidden and is reported, and a rerun fills the new one.
func TestStagedDirNameTaken(t *testing.T) {
	t.Parallel()
	src, dst := stagedSource(t)
	theirs := filepath.Join(dst, "new")
	var made error = errors.New("never made")
	faults := fileio.NewFaultSet(&fileio.Fault{Op: fileio.OpSyncfs, Nth: 1, Then: func() { made = os.Mkdir(theirs, 0o755) }})
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src}, Dest: dst}, faults))
	if made != nil {
		t.Fatalf("making new in the way: %v", made)
	}
	if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 || sum.Failures[0].Path != "new" {
		t.Fatalf("Run: %v, failures %v; want one, for new", err, sum.Failures)
	}
	if names, err := os.ReadDir(theirs); err != nil || len(names) != 0 {
		t.Fatalf("the directory made in the way was replaced or written into: %v, %v", names, err)
	}
	rerunRemovesHidden(t, src, dst)
}

// TestStagedDirWholeWhenPublished: a new directory is renamed onto its name
// only with every name it should hold in place, duplicates (placed by
// sharing another file's data) and further hard-link names included, so
// that a crash can never leave it published without them.
func TestStagedDirWholeWhenPublished(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	data := pattern(7, 40000)
	writeFile(t, filepath.Join(src, "new", "a"), data)
	writeFile(t, filepath.Join(src, "new", "dup"), data)
	same := time.Unix(1_600_000_000, 0) // so that a hard link may share the two
	for _, name := range []string{"a", "dup"} {
		if err := os.Chtimes(filepath.Join(src, "new", name), same, same); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(src, "new", "h1"), pattern(8, 3000))
	if err := os.Link(filepath.Join(src, "new", "h1"), filepath.Join(src, "new", "h2")); err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(dst, ".new"+tempSuffix)
	var missing []string
	published := &fileio.Fault{Op: fileio.OpRename, PathIs: filepath.Join(dst, "new"), Then: func() {
		for _, name := range []string{"a", "dup", "h1", "h2"} {
			if _, err := os.Lstat(filepath.Join(staged, name)); err != nil {
				missing = append(missing, name)
			}
		}
	}}
	faults := fileio.NewFaultSet(published)
	sum, err := runEngine(t, copyengine.WithFaults(copyengine.Options{Sources: []string{src + "/"}, Dest: dst}, faults))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Deduped != 1 || sum.Linked != 1 {
		t.Fatalf("%d deduplicated, %d hard links kept: want 1 and 1", sum.Deduped, sum.Linked)
	}
	if published.Calls() != 1 {
		t.Errorf("new/ renamed onto its name %d times, as the fault saw it; want once", published.Calls())
	}
	if len(missing) > 0 {
		t.Errorf("new/ was published without %v", missing)
	}
	sameTree(t, src, dst)
}
