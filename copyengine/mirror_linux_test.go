//go:build linux

package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/internal/treecmp"
)

// mirrorFixture writes a source tree, copies it to dst, then adds to dst
// what the source lacks: files, a nested directory, a symlink to a
// directory outside (which must be removed as a symlink, never followed),
// and files an --exclude pattern names (which must be kept).
func mirrorFixture(t *testing.T) (src, dst, outside string) {
	t.Helper()
	scr := scratchDir(t)
	src, dst, outside = filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "outside")
	for rel, data := range map[string][]byte{
		"a":         pattern(1, 5000),
		"sub/b":     pattern(2, 70000),
		"sub/c.log": pattern(3, 100),
		"deep/x/y":  pattern(4, 10),
	} {
		writeFile(t, filepath.Join(src, rel), data)
	}
	writeFile(t, filepath.Join(outside, "gone"), []byte("outside: never to be removed\n"))
	settleSources()
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil {
		t.Fatal(err)
	}
	for rel, data := range map[string][]byte{
		"old":               []byte("an old file"),
		"sub/old2":          []byte("another"),
		"olddir/in/f":       []byte("deep extra"),
		"olddir/g":          []byte("extra"),
		"deep/x/z":          []byte("extra beside y"),
		"sub/notes.keep":    []byte("excluded: kept"),
		"keepdir/k.keep":    []byte("excluded inside an extra directory: kept, with its directory"),
		"keepdir/drop":      []byte("removed"),
		"sub/.x.fastcopy-z": []byte("not a temporary's name: removed"),
	} {
		writeFile(t, filepath.Join(dst, rel), data)
	}
	if err := os.Symlink(outside, filepath.Join(dst, "sub", "gone")); err != nil {
		t.Fatal(err)
	}
	return src, dst, outside
}

// TestDeleteMirrors: --delete removes what the source lacks, keeps what
// --exclude names (and the directory holding it), removes a symlink to a
// directory outside as a symlink, and gives the tree rsync -a --delete
// gives.
func TestDeleteMirrors(t *testing.T) {
	src, dst, outside := mirrorFixture(t)
	before := snapshot(t, outside)
	// The same DEST, for rsync to mirror the same source into.
	dst2 := dst + "-rsync"
	if out, err := exec.Command("cp", "-a", dst, dst2).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, Excludes: []string{"*.keep"}, OnEvent: ev.record})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"old", "sub/old2", "olddir", "deep/x/z", "keepdir/drop", "sub/gone", "sub/.x.fastcopy-z"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is still in DEST (%v)", gone, err)
		}
	}
	for _, kept := range []string{"sub/notes.keep", "keepdir/k.keep", "a", "sub/b", "deep/x/y"} {
		if _, err := os.Lstat(filepath.Join(dst, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	untouched(t, outside, before)
	// old, sub/old2, olddir, olddir/in, olddir/in/f, olddir/g, deep/x/z,
	// keepdir/drop, sub/gone, sub/.x.fastcopy-z
	if sum.Deleted != 10 {
		t.Errorf("Deleted = %d, want 10", sum.Deleted)
	}
	n := 0
	for _, e := range ev.all {
		if e.Action == copyengine.ActDelete {
			n++
		}
	}
	if int64(n) != sum.Deleted {
		t.Errorf("%d delete events for %d deletions", n, sum.Deleted)
	}

	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Log("rsync not found: the comparison with rsync -a --delete is left out")
		return
	}
	out, err := exec.Command(rsync, "-a", "--delete", "--exclude", "*.keep", src+"/", dst2+"/").CombinedOutput()
	if err != nil {
		t.Fatalf("rsync: %v\n%s", err, out)
	}
	diffs, err := treecmp.Compare(dst2, dst, treecmp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		if i := strings.Index(d, ": mtime "); i > 0 {
			rel, _ := strconv.Unquote(d[:i])
			if st, err := os.Lstat(filepath.Join(dst, rel)); err == nil && st.IsDir() {
				// rsync leaves a directory it deleted in with the time
				// of the deletion; fastcopy gives it its source's again
				// (checked below).
				continue
			}
		}
		t.Errorf("differs from rsync -a --delete: %s", d)
	}
	for _, rel := range []string{".", "sub", "deep/x"} {
		s, _ := os.Stat(filepath.Join(src, rel))
		d, _ := os.Stat(filepath.Join(dst, rel))
		if s == nil || d == nil || !s.ModTime().Equal(d.ModTime()) {
			t.Errorf("directory %s: its mtime is not its source's after the deletions in it", rel)
		}
	}
}

// TestDeleteDryRunAndMaxDelete: a dry run lists what --delete would remove
// and removes nothing; --max-delete below the plan stops before removing
// anything (the copy itself is done); at the plan's size it removes.
func TestDeleteDryRunAndMaxDelete(t *testing.T) {
	src, dst, _ := mirrorFixture(t)
	writeFile(t, filepath.Join(src, "new"), []byte("new in the source"))
	settleSources()
	before := snapshot(t, dst)
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, DryRun: true, OnEvent: ev.record})
	if err != nil {
		t.Fatal(err)
	}
	untouched(t, dst, before)
	would := map[string]bool{}
	for _, e := range ev.all {
		if e.Action == copyengine.ActWouldDelete {
			would[e.Path] = true
		}
	}
	// 10 as in TestDeleteMirrors, and the two .keep files and keepdir
	// without the exclude.
	if sum.WouldDelete != 13 || len(would) != 13 || !would["olddir/in/f"] || !would["sub/gone"] {
		t.Errorf("dry run: WouldDelete %d, events %v; want 13 including olddir/in/f and sub/gone", sum.WouldDelete, would)
	}

	for _, max := range []int{12, -1} {
		sum, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, MaxDelete: max})
		var me *copyengine.MaxDeleteError
		if !errors.Is(err, copyengine.ErrMaxDelete) || !errors.As(err, &me) || me.Planned != 13 {
			t.Fatalf("MaxDelete %d: Run returned %v, want ErrMaxDelete with 13 planned", max, err)
		}
		if sum.Deleted != 0 {
			t.Errorf("MaxDelete %d: Deleted = %d", max, sum.Deleted)
		}
		for _, rel := range []string{"old", "olddir/in/f", "sub/gone", "keepdir/drop"} {
			if _, err := os.Lstat(filepath.Join(dst, rel)); err != nil {
				t.Errorf("MaxDelete %d: %s was removed: %v", max, rel, err)
			}
		}
		if got, err := os.ReadFile(filepath.Join(dst, "new")); err != nil || string(got) != "new in the source" {
			t.Errorf("MaxDelete %d: the copy was not done: %q %v", max, got, err)
		}
	}
	sum, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, MaxDelete: 13})
	if err != nil || sum.Deleted != 13 {
		t.Fatalf("MaxDelete 13: %v, Deleted %d; want 13 removed", err, sum.Deleted)
	}
	sameTree(t, src, dst)
}

// TestDeleteEmptySourceRefused: an empty source root (a drive not mounted,
// its empty mount point) over a DEST that holds files is refused before
// anything is written; DeleteForce empties DEST.
func TestDeleteEmptySourceRefused(t *testing.T) {
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "mnt"), filepath.Join(scr, "backup")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dst, "photos", "1.jpg"), pattern(5, 4000))
	before := snapshot(t, dst)
	_, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true})
	var ref *copyengine.RefusalError
	if !errors.As(err, &ref) || ref.Path != src || !strings.Contains(ref.Msg, "empty") || !strings.Contains(ref.Hint, "--delete-force") {
		t.Fatalf("Run returned %#v, want a refusal naming %s, saying it is empty, hinting at --delete-force", err, src)
	}
	untouched(t, dst, before)
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, DeleteForce: true})
	if err != nil || sum.Deleted != 2 {
		t.Fatalf("DeleteForce: %v, Deleted %d; want 2", err, sum.Deleted)
	}
	if names, _ := os.ReadDir(dst); len(names) != 0 {
		t.Errorf("DEST still holds %v", names)
	}
}

// TestDeleteOtherFilesystemRefused mirrors a source root on one
// filesystem, then another filesystem mounted in its place (another
// drive at the same mount point): refused, with the hash cache's record
// of the first; DeleteForce mirrors it and remembers the second.
func TestDeleteOtherFilesystemRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to mount loop filesystems")
	}
	scr := scratchDir(t)
	db, dst := filepath.Join(scr, "hashes.db"), filepath.Join(scr, "backup")
	a := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 16 << 20})
	b := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 16 << 20})
	writeFile(t, a.Path("photo1"), pattern(6, 3000))
	writeFile(t, b.Path("other"), pattern(7, 3000))
	settleSources()
	if _, err := runCached(t, db, copyengine.Options{Sources: []string{a.Dir}, Dest: dst, Delete: true}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dst)
	_, err := runCached(t, db, copyengine.Options{Sources: []string{b.Dir}, Dest: dst, Delete: true})
	var ref *copyengine.RefusalError
	if !errors.As(err, &ref) || ref.Path != b.Dir || !strings.Contains(ref.Msg, "another filesystem") {
		t.Fatalf("Run returned %v, want a refusal naming %s as on another filesystem", err, b.Dir)
	}
	untouched(t, dst, before)
	if _, err := runCached(t, db, copyengine.Options{Sources: []string{b.Dir}, Dest: dst, Delete: true, DeleteForce: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "photo1")); !os.IsNotExist(err) {
		t.Errorf("photo1 was not removed by the forced mirror (%v)", err)
	}
	// The second filesystem is remembered now: mirrored again without force.
	if _, err := runCached(t, db, copyengine.Options{Sources: []string{b.Dir}, Dest: dst, Delete: true}); err != nil {
		t.Errorf("the filesystem mirrored with DeleteForce is not remembered: %v", err)
	}
}

// TestBackupDirKeepsVersions: with BackupDir, a file a newer copy replaces
// and a file --delete removes are both kept there under their paths, on
// the same filesystem (hard links) and on another (verified copies); a
// version kept already is never replaced.
func TestBackupDirKeepsVersions(t *testing.T) {
	for _, cross := range []bool{false, true} {
		t.Run(map[bool]string{false: "same-fs", true: "cross-fs"}[cross], func(t *testing.T) {
			scr := scratchDir(t)
			src, dst, bk := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "old")
			if cross {
				if os.Geteuid() != 0 {
					t.Skip("skipping: needs root to mount a second filesystem")
				}
				bk = loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 16 << 20}).Path("old")
			}
			writeFile(t, filepath.Join(src, "doc"), []byte("version 1"))
			writeFile(t, filepath.Join(src, "d", "gone"), []byte("to be deleted"))
			settleSources()
			if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil {
				t.Fatal(err)
			}
			for i, v := range []string{"version 2", "version 3"} {
				writeFile(t, filepath.Join(src, "doc"), []byte(v))
				future := time.Now().Add(time.Duration(i+1) * time.Hour)
				if err := os.Chtimes(filepath.Join(src, "doc"), future, future); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					if err := os.Remove(filepath.Join(src, "d", "gone")); err != nil {
						t.Fatal(err)
					}
				}
				settleSources()
				sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, BackupDir: bk})
				if err != nil {
					t.Fatal(err)
				}
				want := int64(1)
				if i == 0 {
					want = 2
				}
				if sum.BackedUp != want {
					t.Errorf("run %d: BackedUp = %d, want %d", i+1, sum.BackedUp, want)
				}
			}
			for rel, want := range map[string]string{"doc": "version 1", "doc.~1~": "version 2", "d/gone": "to be deleted"} {
				if got, err := os.ReadFile(filepath.Join(bk, rel)); err != nil || string(got) != want {
					t.Errorf("backup %s: %q, %v; want %q", rel, got, err, want)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(dst, "doc")); string(got) != "version 3" {
				t.Errorf("DEST/doc holds %q", got)
			}
			if _, err := os.Lstat(filepath.Join(dst, "d", "gone")); !os.IsNotExist(err) {
				t.Errorf("d/gone is still in DEST (%v)", err)
			}
			noTemps(t, bk)
		})
	}
}

// TestBackupDirInsideDestRefused: a backup directory inside DEST would be
// met by the copy as files the source lacks.
func TestBackupDirInsideDestRefused(t *testing.T) {
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	writeFile(t, filepath.Join(src, "a"), []byte("a"))
	writeFile(t, filepath.Join(dst, "a"), []byte("b"))
	_, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, BackupDir: filepath.Join(dst, "old")})
	var ref *copyengine.RefusalError
	if !errors.As(err, &ref) {
		t.Fatalf("Run returned %v, want a refusal", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "old")); !os.IsNotExist(err) {
		t.Errorf("the refused run made the backup directory (%v)", err)
	}
}

// TestMoveRemovesSources: --move removes each source file once its copy is
// in place, then the emptied source directories, never the source root;
// a destination file of the same size and mtime but other content is not
// taken as the source's copy (the source would be lost): it is copied.
func TestMoveRemovesSources(t *testing.T) {
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "DCIM"), filepath.Join(scr, "Photos")
	files := map[string][]byte{
		"100/a.jpg": pattern(8, 200000),
		"100/b.jpg": pattern(9, 3000),
		"101/c.jpg": pattern(10, 3000),
		"e":         nil,
	}
	writeFiles(t, src, files)
	if err := os.Symlink("a.jpg", filepath.Join(src, "100", "link")); err != nil {
		t.Fatal(err)
	}
	// Same size and mtime as the source's b.jpg, other bytes.
	writeFile(t, filepath.Join(dst, "100", "b.jpg"), pattern(11, 3000))
	st, err := os.Stat(filepath.Join(src, "100", "b.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dst, "100", "b.jpg"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	settleSources()
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true})
	if err != nil {
		t.Fatal(err)
	}
	for rel, data := range files {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: not the source's content in DEST (%v)", rel, err)
		}
	}
	if tgt, err := os.Readlink(filepath.Join(dst, "100", "link")); err != nil || tgt != "a.jpg" {
		t.Errorf("link: %q %v", tgt, err)
	}
	names, err := os.ReadDir(src)
	if err != nil {
		t.Fatalf("the source root was removed: %v", err)
	}
	if len(names) != 0 {
		t.Errorf("the source still holds %v", names)
	}
	if sum.SourcesRemoved != 5 || sum.SourceDirsGone != 2 {
		t.Errorf("SourcesRemoved %d, SourceDirsGone %d; want 5 and 2", sum.SourcesRemoved, sum.SourceDirsGone)
	}
}

// TestMoveDryRunCountsWhatWouldGo: a dry run of --move removes nothing and
// counts the sources and the source directories the real run removes.
func TestMoveDryRunCountsWhatWouldGo(t *testing.T) {
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "DCIM"), filepath.Join(scr, "Photos")
	files := map[string][]byte{
		"100/a.jpg":     pattern(8, 200000),
		"100/b.jpg":     pattern(9, 3000),
		"101/c.jpg":     pattern(10, 3000),
		"101/sub/d.jpg": pattern(12, 3000),
		"e":             nil,
	}
	writeFiles(t, src, files)
	settleSources()
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range files {
		if _, err := os.Lstat(filepath.Join(src, rel)); err != nil {
			t.Errorf("%s: the dry run removed the source (%v)", rel, err)
		}
	}
	if sum.SourcesRemoved != 5 || sum.SourceDirsGone != 3 {
		t.Errorf("SourcesRemoved %d, SourceDirsGone %d; want 5 and 3", sum.SourcesRemoved, sum.SourceDirsGone)
	}
}

// TestDeleteKeepsOwnCacheFiles: with the hash cache inside DEST, --delete
// keeps the files of that cache the source walk leaves out (its file, and
// the presence file and journals the runs sharing it write), and removes
// the rest of what the source lacks.
func TestDeleteKeepsOwnCacheFiles(t *testing.T) {
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	writeFile(t, filepath.Join(src, "a"), pattern(1, 3000))
	writeFile(t, filepath.Join(dst, "stale"), pattern(2, 100))
	db := filepath.Join(dst, "cache.db")
	hc, err := hashcache.Open(db, hashcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	own := []string{"cache.db", "cache.db.users"}
	for _, n := range own {
		if _, err := os.Lstat(filepath.Join(dst, n)); err != nil {
			t.Fatalf("the cache has no %s: %v", n, err)
		}
	}
	settleSources()
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, Cache: hc}); err != nil {
		t.Fatal(err)
	}
	for _, n := range own {
		if _, err := os.Lstat(filepath.Join(dst, n)); err != nil {
			t.Errorf("--delete removed the cache's %s: %v", n, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, "stale")); !os.IsNotExist(err) {
		t.Errorf("stale: kept (%v)", err)
	}
}
