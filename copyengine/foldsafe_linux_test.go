package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// A source name that the destination holds under another spelling only
// (the source has "readme", DEST "README") replaces DEST's file only where
// the run can show that nothing is lost: DEST's file holds exactly the
// source's content (read from both sides). Anything else is a collision,
// failed by name, and DEST's file stays as it is: it may be the only copy
// of another source file (one that --move removed).

// foldsafeDest returns an empty directory on a destination that folds
// case: "exfat" (exfat-fuse), "casefold" (an ext4 directory with the
// casefold attribute) or "fat" (fusefat). It skips the test, saying why,
// where that cannot be made.
func foldsafeDest(t *testing.T, kind string) string {
	t.Helper()
	var dst string
	switch kind {
	case "exfat":
		dst = loopfs.MountFUSE(t, loopfs.ExFAT(64<<20)).Path("d")
	case "fat":
		dst = loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.FuseFAT, Size: 64 << 20}).Path("d")
	case "casefold":
		if _, err := os.Stat("/sys/fs/ext4/features/casefold"); err != nil {
			t.Skip("skipping: this kernel's ext4 has no casefold support (/sys/fs/ext4/features/casefold)")
		}
		fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20, Mkfs: []string{"-O", "casefold"}})
		dst = fs.Path("d")
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := sbin("chattr", "+F", dst); err != nil {
			t.Skipf("skipping: chattr +F: %v: %s", err, out)
		}
		return dst
	default:
		t.Fatalf("no destination kind %q", kind)
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	// Not every driver folds: the test is about those that do.
	if err := os.WriteFile(filepath.Join(dst, "Fold-Check"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := os.Lstat(filepath.Join(dst, "fOLD-cHECK"))
	if rmErr := os.Remove(filepath.Join(dst, "Fold-Check")); rmErr != nil {
		t.Fatal(rmErr)
	}
	if err != nil {
		t.Skipf("skipping: %s keeps names that differ in case apart (%v)", kind, err)
	}
	return dst
}

// foldsafeRun runs opt and returns its summary, the failures it reported
// by path, and its error.
//
// A FUSE driver that numbers inodes by its own node table (exfat-fuse,
// fusefat) gives a file or directory a new number once the kernel forgets
// it, which memory pressure does at any moment: the run then fails a
// file "replaced by another file" or keeps a directory's extras as
// "replaced during the run", a false failure that is not the subject of
// these tests. Such a run is run again, as the docs advise, up to three
// times, each logged; a rerun is what every test here does anyway.
func foldsafeRun(t *testing.T, opt copyengine.Options) (copyengine.Summary, map[string]error, error) {
	t.Helper()
	for try := 1; ; try++ {
		var ev events
		opt.OnEvent = ev.record
		sum, err := runEngine(t, opt)
		fails := ev.failures()
		renumbered := slices.ContainsFunc(sum.DeleteKept, func(s string) bool { return strings.Contains(s, "replaced during the run") })
		for _, f := range fails {
			renumbered = renumbered || strings.Contains(f.Error(), "was replaced by another file")
		}
		if !renumbered || try == 4 {
			return sum, fails, err
		}
		t.Logf("run %d met renumbered inodes (%v; %q): running again", try, fails, sum.DeleteKept)
	}
}

// foldsafeWant checks that the run failed exactly the paths of want (DEST
// paths) with a CollisionError whose Winner is the name given: a source
// name of the same directory (lost to), or, for a name DEST holds under
// another spelling with other content, DEST's path (Held).
func foldsafeWant(t *testing.T, run string, err error, fails map[string]error, want map[string]string, held map[string]bool) {
	t.Helper()
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Errorf("%s: Run returned %v, want ErrSomeFailed (exit 3)", run, err)
	}
	for p, f := range fails {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %q failed: %v; want no failure there", run, p, f)
		}
	}
	for p, win := range want {
		var ce *copyengine.CollisionError
		if !errors.As(fails[p], &ce) {
			t.Errorf("%s: %q failed with %v, want a CollisionError", run, p, fails[p])
			continue
		}
		if ce.Winner != win || ce.Held != held[p] || !strings.Contains(ce.Error(), "case-insensitive") || !strings.Contains(ce.Error(), `"`+win+`"`) {
			t.Errorf("%s: %q: %v (winner %q, held %v); want it to collide with %q (held %v)", run, p, ce, ce.Winner, ce.Held, win, held[p])
		}
	}
}

// foldsafeHas checks that each file of want holds its content, and that
// each path of gone does not exist.
func foldsafeHas(t *testing.T, run, root string, want map[string]string, gone ...string) {
	t.Helper()
	for rel, data := range want {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || string(got) != data {
			t.Errorf("%s: %s holds %q (%v), want %q", run, filepath.Join(root, rel), got, err, data)
		}
	}
	for _, rel := range gone {
		if _, err := os.Lstat(filepath.Join(root, rel)); err == nil {
			t.Errorf("%s: %s exists, want it gone", run, filepath.Join(root, rel))
		}
	}
}

// foldsafeSameTimes gives the named files one mtime, so that size and
// mtime cannot tell them apart.
func foldsafeSameTimes(t *testing.T, root string, rels ...string) {
	t.Helper()
	mt := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, rel := range rels {
		if err := os.Chtimes(filepath.Join(root, rel), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFoldsafeMove is the verified move of a directory holding README
// (content A) and readme (content B) onto a destination that folds case.
// The first run moves README and fails readme as a collision (kept). The
// rerun, which the docs advise after a failure, finds DEST's README, the
// only copy of A now: it must not copy readme over it (before, it did:
// "copy README", exit 0, and A existed nowhere), nor take it for readme's
// copy by size and mtime and remove readme (Same and same, one size and
// mtime). readme fails again, naming DEST's README, and stays.
func TestFoldsafeMove(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"exfat", "casefold", "fat"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dst := foldsafeDest(t, kind)
			src := filepath.Join(t.TempDir(), "card")
			a, b := "content A, the upper-case README\n", "content B\n"
			writeFiles(t, src, map[string][]byte{
				"README": []byte(a), "readme": []byte(b),
				"Same": []byte("same size, 1\n"), "same": []byte("same size, 2\n"),
				"other": []byte("other"),
			})
			foldsafeSameTimes(t, src, "Same", "same")
			settleSources()
			opt := copyengine.Options{Sources: []string{src}, Dest: dst, Move: true}
			_, fails, err := foldsafeRun(t, opt)
			foldsafeWant(t, "first run", err, fails, map[string]string{"readme": "README", "same": "Same"}, nil)
			foldsafeHas(t, "first run", dst, map[string]string{"README": a, "Same": "same size, 1\n", "other": "other"})
			foldsafeHas(t, "first run", src, map[string]string{"readme": b, "same": "same size, 2\n"}, "README", "Same", "other")
			// The dry run of the rerun says the same and writes nothing.
			dry := opt
			dry.DryRun = true
			_, fails, err = foldsafeRun(t, dry)
			foldsafeWant(t, "dry rerun", err, fails, map[string]string{"README": "README", "Same": "Same"}, map[string]bool{"README": true, "Same": true})
			foldsafeHas(t, "dry rerun", src, map[string]string{"readme": b, "same": "same size, 2\n"})
			for _, run := range []string{"rerun", "third run"} {
				_, fails, err := foldsafeRun(t, opt)
				foldsafeWant(t, run, err, fails, map[string]string{"README": "README", "Same": "Same"}, map[string]bool{"README": true, "Same": true})
				foldsafeHas(t, run, dst, map[string]string{"README": a, "Same": "same size, 1\n", "other": "other"})
				foldsafeHas(t, run, src, map[string]string{"readme": b, "same": "same size, 2\n"})
			}
		})
	}
}

// TestFoldsafeMoveSameContent: where DEST's file under the other spelling
// holds exactly the source's content (read from both sides), nothing
// needs replacing: the source is found in place and --move removes it.
func TestFoldsafeMoveSameContent(t *testing.T) {
	t.Parallel()
	dst := foldsafeDest(t, "exfat")
	src := filepath.Join(t.TempDir(), "card")
	writeFiles(t, src, map[string][]byte{"README": []byte("one content\n"), "readme": []byte("one content\n")})
	settleSources()
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, Move: true}
	_, fails, err := foldsafeRun(t, opt)
	foldsafeWant(t, "first run", err, fails, map[string]string{"readme": "README"}, nil)
	sum, fails, err := foldsafeRun(t, opt)
	if err != nil || len(fails) != 0 {
		t.Fatalf("rerun: %v %v, want success", err, fails)
	}
	if sum.Skipped != 1 || sum.Copied != 0 || sum.SourcesRemoved != 1 {
		t.Errorf("rerun: skipped %d, copied %d, sources removed %d; want 1, 0, 1", sum.Skipped, sum.Copied, sum.SourcesRemoved)
	}
	foldsafeHas(t, "rerun", dst, map[string]string{"README": "one content\n"})
	foldsafeHas(t, "rerun", src, nil, "readme")
	if got := listing(t, dst); !slices.Equal(got, []string{"README"}) {
		t.Errorf("the destination holds %q, want README alone", got)
	}
}

// foldsafeMirrorTrees makes DEST hold README, Docs/a, Docs/x and plain/old
// (as an earlier copy left them) and a source that names README and Docs
// in lower case, with other content, and lacks Docs/x and plain/old.
func foldsafeMirrorTrees(t *testing.T, kind string) (src, dst string) {
	t.Helper()
	dst = foldsafeDest(t, kind)
	old := filepath.Join(t.TempDir(), "old")
	writeFiles(t, old, map[string][]byte{
		"README": []byte("A: DEST's README\n"), "Docs/a": []byte("A2: DEST's Docs/a\n"),
		"Docs/x": []byte("x: only in DEST\n"), "plain/old": []byte("old"), "plain/kept": []byte("kept"),
		"Notes/same": []byte("same"), "Notes/keep": []byte("keep: only in DEST\n"),
	})
	if _, fails, err := foldsafeRun(t, copyengine.Options{Sources: []string{old}, Dest: dst}); err != nil {
		t.Fatalf("making DEST: %v %v", err, fails)
	}
	src = filepath.Join(t.TempDir(), "src")
	writeFiles(t, src, map[string][]byte{
		"readme": []byte("B\n"), "docs/a": []byte("B2\n"), "docs/new": []byte("new"),
		"plain/kept": []byte("kept"), "notes/same": []byte("same"),
	})
	settleSources()
	return src, dst
}

// TestFoldsafeDelete: --delete into a destination that holds README and
// Docs/ where the source has readme and docs/. The source's names are not
// "not in DEST" and DEST's are not "not in source": README and Docs/a are
// not replaced (collisions, by name), Docs/x is not deleted (Docs is not
// known to be docs' copy: its extras are kept), a new file is added to
// Docs, and plain/ is mirrored as usual. Notes/keep is kept too, although
// nothing in Notes failed (notes/same is found in place by content): the
// kept extras are named in DeleteKept.
func TestFoldsafeDelete(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"exfat", "casefold", "fat"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			src, dst := foldsafeMirrorTrees(t, kind)
			for _, run := range []string{"run", "rerun"} {
				sum, fails, err := foldsafeRun(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true})
				t.Logf("%s: DeleteKept %q", run, sum.DeleteKept)
				foldsafeWant(t, run, err, fails, map[string]string{"README": "README", "Docs/a": "Docs/a"}, map[string]bool{"README": true, "Docs/a": true})
				foldsafeHas(t, run, dst, map[string]string{
					"README": "A: DEST's README\n", "Docs/a": "A2: DEST's Docs/a\n", "Docs/x": "x: only in DEST\n",
					"Docs/new": "new", "plain/kept": "kept", "Notes/same": "same", "Notes/keep": "keep: only in DEST\n",
				})
				foldsafePlainMirrored(t, run, sum, dst)
				if got := listing(t, dst); !slices.Equal(got, []string{"Docs", "Notes", "README", "plain"}) {
					t.Errorf("%s: the destination holds %q", run, got)
				}
				for _, d := range []string{`"Docs"`, `"Notes"`} {
					if !slices.ContainsFunc(sum.DeleteKept, func(s string) bool { return strings.HasPrefix(s, d) }) {
						t.Errorf("%s: DeleteKept %q does not name %s", run, sum.DeleteKept, d)
					}
				}
			}
		})
	}
}

// TestFoldsafeBackupDir: with --backup-dir, the files DEST holds under
// another spelling are not replaced, so nothing of theirs is backed up;
// only plain/old, which --delete removes, is.
func TestFoldsafeBackupDir(t *testing.T) {
	t.Parallel()
	src, dst := foldsafeMirrorTrees(t, "exfat")
	bd := filepath.Join(t.TempDir(), "backup")
	sum, fails, err := foldsafeRun(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, BackupDir: bd})
	foldsafeWant(t, "run", err, fails, map[string]string{"README": "README", "Docs/a": "Docs/a"}, map[string]bool{"README": true, "Docs/a": true})
	foldsafeHas(t, "run", dst, map[string]string{
		"README": "A: DEST's README\n", "Docs/a": "A2: DEST's Docs/a\n", "Docs/x": "x: only in DEST\n", "Docs/new": "new",
		"Notes/keep": "keep: only in DEST\n",
	})
	t.Logf("DeleteKept %q", sum.DeleteKept)
	if foldsafePlainMirrored(t, "run", sum, dst) && sum.BackedUp != 1 {
		t.Errorf("BackedUp %d, want 1 (plain/old)", sum.BackedUp)
	}
	if sum.BackedUp > 1 {
		t.Errorf("BackedUp %d, want at most plain/old", sum.BackedUp)
	}
	// What the runs deleted is in the backup, and nothing else is.
	if got := listing(t, bd); len(got) > 0 && !slices.Equal(got, []string{"plain"}) {
		t.Errorf("the backup directory holds %q, want plain alone", got)
	}
	if _, err := os.Lstat(filepath.Join(dst, "plain", "old")); err != nil {
		foldsafeHas(t, "run", bd, map[string]string{"plain/old": "old"})
		if got := listing(t, filepath.Join(bd, "plain")); !slices.Equal(got, []string{"old"}) {
			t.Errorf("the backup directory's plain holds %q, want old alone", got)
		}
	}
}

// foldsafePlainMirrored checks that --delete removed plain/old, which
// the source lacks (plain is spelled alike on both sides), and reports
// whether it did. Where the FUSE driver renumbered plain's inode during
// the run (see foldsafeRun), the run keeps its extras instead, saying so:
// that is logged, and not checked.
func foldsafePlainMirrored(t *testing.T, run string, sum copyengine.Summary, dst string) bool {
	t.Helper()
	if slices.Contains(sum.DeleteKept, `"plain": the directory was replaced during the run`) {
		t.Logf("%s: plain's inode was renumbered during the run, and its extras kept", run)
		return false
	}
	foldsafeHas(t, run, dst, nil, "plain/old")
	return true
}
