package copyengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// foldRun copies src into dst (which exists) and returns its summary and
// the failures it reported, by path.
func foldRun(t *testing.T, src, dst string) (copyengine.Summary, map[string]error, error) {
	t.Helper()
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst, OnEvent: ev.record})
	return sum, ev.failures(), err
}

// listing is the sorted names in dir.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	hiddenGone(t, dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// hiddenGone waits, up to 3 s, for the ".fuse_hidden" files below root to
// go. A libfuse driver hides a file removed while the kernel still counts
// it open, and the kernel tells it of a close asynchronously: a file a run
// closed and then removed can be hidden for an instant and is removed by
// the driver once the close arrives. One that stays is a descriptor the
// run kept, and the listing that follows shows it.
func hiddenGone(t *testing.T, root string) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		hidden := false
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".fuse_hidden") {
				hidden = true
			}
			return nil
		})
		if !hidden {
			return
		}
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantCollision checks that the run failed exactly the names lost (paths
// relative to the destination), each with a CollisionError naming the name
// it lost to, and nothing else.
func wantCollision(t *testing.T, run string, err error, fails map[string]error, lost map[string]string) {
	t.Helper()
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Errorf("%s: Run returned %v, want ErrSomeFailed", run, err)
	}
	if len(fails) != len(lost) {
		t.Errorf("%s: failures %v, want exactly %v", run, fails, lost)
	}
	for p, win := range lost {
		var ce *copyengine.CollisionError
		if !errors.As(fails[p], &ce) {
			t.Errorf("%s: %q failed with %v, want a CollisionError", run, p, fails[p])
			continue
		}
		if ce.Name != filepath.Base(p) || ce.Winner != win || !strings.Contains(ce.Error(), "case-insensitive") {
			t.Errorf("%s: %q: %v (winner %q), want it to lose to %q", run, p, ce, ce.Winner, win)
		}
	}
}

// compare runs treeverify.CompareTrees from the device and returns its
// differences.
func compare(t *testing.T, src, dst string) []treeverify.Diff {
	t.Helper()
	r, err := treeverify.CompareTrees(context.Background(), src, dst, treeverify.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Diffs
}

// TestFoldCollisionsExfat is the case of names that differ only in case,
// copied to exFAT (exfat-fuse): "README" and "readme" are one name there.
// The first run copies one of them (the first in byte order) and fails the
// other by name; a rerun keeps that one and fails the other again; verify
// reports the one that is not there, for the same reason.
func TestFoldCollisionsExfat(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "docs", "README"), []byte("upper"))
	writeFile(t, filepath.Join(src, "docs", "readme"), []byte("lower case"))
	writeFile(t, filepath.Join(src, "docs", "other"), []byte("other"))
	writeFile(t, filepath.Join(src, "Sub", "a"), []byte("a in Sub"))
	writeFile(t, filepath.Join(src, "sub", "b"), []byte("b in sub"))
	// exFAT's up-case table folds É and é; it leaves the dotless ı apart
	// from i, which the broad key groups (both upper-case to I): the
	// destination decides, and both are copied.
	writeFile(t, filepath.Join(src, "intl", "\u00c9t\u00e9"), []byte("capital"))
	writeFile(t, filepath.Join(src, "intl", "\u00e9t\u00e9"), []byte("small"))
	writeFile(t, filepath.Join(src, "intl", "\u0131"), []byte("dotless"))
	writeFile(t, filepath.Join(src, "intl", "i"), []byte("dotted"))
	dst := fs.Path("dst")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	lost := map[string]string{"docs/readme": "README", "sub": "Sub", "intl/\u00e9t\u00e9": "\u00c9t\u00e9"}
	for _, run := range []string{"first run", "rerun", "third run"} {
		_, fails, err := foldRun(t, src, dst)
		wantCollision(t, run, err, fails, lost)
		if got := listing(t, filepath.Join(dst, "docs")); !slices.Equal(got, []string{"README", "other"}) {
			t.Errorf("%s: docs holds %q, want README and other", run, got)
		}
		if got := readString(t, filepath.Join(dst, "docs", "README")); got != "upper" {
			t.Errorf("%s: docs/README holds %q, want the source README's %q", run, got, "upper")
		}
		if got := listing(t, filepath.Join(dst, "Sub")); !slices.Equal(got, []string{"a"}) {
			t.Errorf("%s: Sub holds %q, want only a", run, got)
		}
		if got := listing(t, filepath.Join(dst, "intl")); !slices.Equal(got, []string{"i", "\u00c9t\u00e9", "\u0131"}) {
			t.Errorf("%s: intl holds %q, want i, \u00c9t\u00e9 and \u0131", run, got)
		}
		if got := listing(t, dst); !slices.Equal(got, []string{"Sub", "docs", "intl"}) {
			t.Errorf("%s: the destination holds %q", run, got)
		}
		diffs := compare(t, src, dst)
		var paths []string
		for _, d := range diffs {
			paths = append(paths, d.Path)
			if d.Kind != treeverify.Missing || !strings.Contains(d.Detail, "one name") {
				t.Errorf("%s: verify: %+v, want it missing as one name with another", run, d)
			}
		}
		if !slices.Equal(paths, []string{"docs/readme", "intl/\u00e9t\u00e9", "sub"}) {
			t.Errorf("%s: verify reports %+v, want docs/readme, intl/\u00e9t\u00e9 and sub, and nothing else", run, diffs)
		}
	}
}

// TestFoldKeepsDestSpelling: what the destination already holds decides.
// A destination that holds "readme" (copied when the source had only that)
// keeps it when the source gains "README". A source name that the
// destination holds under another spelling only is found in place when
// the destination's file holds its content ("Notes.txt" renamed
// "notes.txt"), and is a collision, naming the destination's file, when
// it holds other content ("Photo.JPG" renamed "photo.jpg" and changed):
// that file may be another source's only copy, so it is never replaced.
// Neither flips on a rerun, and verify agrees.
func TestFoldKeepsDestSpelling(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	src := t.TempDir()
	dst := fs.Path("dst")
	writeFile(t, filepath.Join(src, "readme"), []byte("lower v1"))
	writeFile(t, filepath.Join(src, "Photo.JPG"), []byte("photo v1"))
	writeFile(t, filepath.Join(src, "Notes.txt"), []byte("notes"))
	if _, fails, err := foldRun(t, src, dst); err != nil {
		t.Fatalf("first run: %v %v", err, fails)
	}
	// The source gains "README", "Photo.JPG" is renamed "photo.jpg" and
	// changed, "Notes.txt" is renamed "notes.txt".
	writeFile(t, filepath.Join(src, "README"), []byte("upper"))
	writeFile(t, filepath.Join(src, "readme"), []byte("lower v2, longer"))
	if err := os.Remove(filepath.Join(src, "Photo.JPG")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "photo.jpg"), []byte("photo v2, longer"))
	if err := os.Rename(filepath.Join(src, "Notes.txt"), filepath.Join(src, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"second run", "rerun"} {
		_, fails, err := foldRun(t, src, dst)
		var ce *copyengine.CollisionError
		if !errors.As(fails["Photo.JPG"], &ce) || !ce.Held || ce.Name != "photo.jpg" || ce.Winner != "Photo.JPG" {
			t.Errorf("%s: Photo.JPG failed with %v, want a collision of photo.jpg with the destination's Photo.JPG", run, fails["Photo.JPG"])
		}
		delete(fails, "Photo.JPG")
		wantCollision(t, run, err, fails, map[string]string{"README": "readme"})
		if got := listing(t, dst); !slices.Equal(got, []string{"Notes.txt", "Photo.JPG", "readme"}) {
			t.Errorf("%s: the destination holds %q, want Notes.txt, Photo.JPG and readme", run, got)
		}
		if got := readString(t, filepath.Join(dst, "readme")); got != "lower v2, longer" {
			t.Errorf("%s: readme holds %q", run, got)
		}
		if got := readString(t, filepath.Join(dst, "Photo.JPG")); got != "photo v1" {
			t.Errorf("%s: Photo.JPG holds %q, want what it held (the source Photo.JPG's)", run, got)
		}
		diffs := compare(t, src, dst)
		if len(diffs) != 2 || diffs[0].Path != "README" || diffs[0].Kind != treeverify.Missing || diffs[1].Path != "photo.jpg" || diffs[1].Kind != treeverify.Differ {
			t.Errorf("%s: verify reports %+v, want README missing and photo.jpg differing, and nothing else", run, diffs)
		}
	}
}

// TestFoldNTFS: ntfs-3g keeps names that differ in case apart (POSIX
// semantics), also with windows_names, which forbids characters, not
// case: both names are copied, and nothing fails.
func TestFoldNTFS(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]string{nil, {"windows_names"}} {
		t.Run(strings.Join(append([]string{"ntfs-3g"}, opts...), ","), func(t *testing.T) {
			fs := loopfs.MountFUSE(t, loopfs.NTFS(16<<20, opts...))
			src := t.TempDir()
			writeFile(t, filepath.Join(src, "README"), []byte("upper"))
			writeFile(t, filepath.Join(src, "readme"), []byte("lower"))
			dst := fs.Path("dst")
			if _, fails, err := foldRun(t, src, dst); err != nil {
				t.Fatalf("%v %v", err, fails)
			}
			if got := listing(t, dst); !slices.Equal(got, []string{"README", "readme"}) {
				t.Errorf("the destination holds %q, want both names", got)
			}
			if diffs := compare(t, src, dst); len(diffs) != 0 {
				t.Errorf("verify: %+v", diffs)
			}
		})
	}
}

// TestFoldExt4Casefold: on ext4 with the casefold feature, folding is an
// attribute of a directory (chattr +F): names collide in such a directory
// and in the directories made in it, and not beside it.
func TestFoldExt4Casefold(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/sys/fs/ext4/features/casefold"); err != nil {
		// Without CONFIG_UNICODE the kernel refuses to mount it.
		t.Skip("skipping: this kernel's ext4 has no casefold support (/sys/fs/ext4/features/casefold)")
	}
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20, Mkfs: []string{"-O", "casefold"}})
	dst := fs.Path("dst")
	if err := os.MkdirAll(filepath.Join(dst, "folded"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := sbin("chattr", "+F", filepath.Join(dst, "folded")); err != nil {
		t.Skipf("skipping: chattr +F: %v: %s", err, out)
	}
	src := t.TempDir()
	for _, d := range []string{"plain", "folded", "folded/deeper"} {
		writeFile(t, filepath.Join(src, d, "README"), []byte("upper"))
		writeFile(t, filepath.Join(src, d, "readme"), []byte("lower"))
	}
	_, fails, err := foldRun(t, src, dst)
	wantCollision(t, "run", err, fails, map[string]string{"folded/readme": "README", "folded/deeper/readme": "README"})
	if got := listing(t, filepath.Join(dst, "plain")); !slices.Equal(got, []string{"README", "readme"}) {
		t.Errorf("plain holds %q, want both names", got)
	}
	for _, d := range []string{"folded", "folded/deeper"} {
		if got := listing(t, filepath.Join(dst, d)); !slices.Contains(got, "README") || slices.Contains(got, "readme") {
			t.Errorf("%s holds %q, want README alone", d, got)
		}
	}
}

// TestFoldTempNameOfAnother: a source file named ".A.fastcopy-tmp" is, on
// exFAT, the temporary name of its neighbour "a". The neighbour gets
// another temporary, and both files arrive; before, writing "a" found its
// temporary taken, took the other file's copy for a leftover and removed
// it.
func TestFoldTempNameOfAnother(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	src := t.TempDir()
	writeFile(t, filepath.Join(src, ".A"+tempSuffix), []byte("a file of the source"))
	writeFile(t, filepath.Join(src, "a"), []byte("a"))
	dst := fs.Path("dst")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"first run", "rerun"} {
		if _, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Jobs: 1, JobsReason: "test"}); err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		if got := listing(t, dst); !slices.Equal(got, []string{".A" + tempSuffix, "a"}) {
			t.Errorf("%s: the destination holds %q", run, got)
		}
		if got := readString(t, filepath.Join(dst, ".A"+tempSuffix)); got != "a file of the source" {
			t.Errorf("%s: .A%s holds %q", run, tempSuffix, got)
		}
		if diffs := compare(t, src, dst); len(diffs) != 0 {
			t.Errorf("%s: verify: %+v", run, diffs)
		}
	}
}

// TestFoldProbeListedNonASCII: the probe that asks about names the
// destination holds already swaps ASCII letters only. exfat-fuse keeps "ǅ"
// and "Ǆ" apart although it folds "README" and "readme": a destination
// holding only "ǅ" must still be found to fold.
func TestFoldProbeListedNonASCII(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	dst := fs.Path("dst")
	writeFile(t, filepath.Join(dst, "\u01c5"), []byte("titlecase"))
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "\u01c5"), []byte("titlecase"))
	writeFile(t, filepath.Join(src, "README"), []byte("upper"))
	writeFile(t, filepath.Join(src, "readme"), []byte("lower case"))
	_, fails, err := foldRun(t, src, dst)
	wantCollision(t, "run", err, fails, map[string]string{"readme": "README"})
	if got := readString(t, filepath.Join(dst, "README")); got != "upper" {
		t.Errorf("README holds %q", got)
	}
}

// TestFoldListedLowerCase: lowntfs-3g with ignore_case folds case and lists
// every name in lower case, so the spelling the destination shows says
// nothing of which source file it holds. README and readme (same size and
// mtime, readme with two more names) are one name there: the first run
// copies README and fails readme; the rerun sees "readme" listed, so
// readme is the one copied now, and the file (holding README's bytes) must
// be compared by content and replaced, not skipped by size and mtime, with
// readme's other names linked to readme's bytes, never README's.
func TestFoldListedLowerCase(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.LowNTFS(16<<20, "ignore_case"))
	src := t.TempDir()
	upper, lower := []byte("UPPER-CONTENT\n"), []byte("lower-content\n")
	writeFile(t, filepath.Join(src, "README"), upper)
	writeFile(t, filepath.Join(src, "readme"), lower)
	mt := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range []string{"README", "readme"} {
		if err := os.Chtimes(filepath.Join(src, n), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sub/other", "zz"} {
		if err := os.Link(filepath.Join(src, "readme"), filepath.Join(src, n)); err != nil {
			t.Fatal(err)
		}
	}
	dst := fs.Path("dst")
	for run := 1; run <= 3; run++ {
		_, fails, err := foldRun(t, src, dst)
		if !errors.Is(err, copyengine.ErrSomeFailed) || len(fails) != 1 {
			t.Fatalf("run %d: %v, failures %v; want one collision", run, err, fails)
		}
		got := readString(t, filepath.Join(dst, "readme"))
		t.Logf("run %d: failures %v; the destination lists %q, holding %q", run, fails, listing(t, dst), got)
		want := string(lower) // the copied one is the one that did not fail
		if _, ok := fails["readme"]; ok {
			want = string(upper)
		}
		if got != want {
			t.Errorf("run %d: the destination file holds %q, want %q (the source copied there)", run, got, want)
		}
		for _, n := range []string{"sub/other", "zz"} {
			if got := readString(t, filepath.Join(dst, n)); got != string(lower) {
				t.Errorf("run %d: %s holds %q, want readme's %q", run, n, got, lower)
			}
		}
	}
}
