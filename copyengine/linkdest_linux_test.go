package copyengine_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// usedBlocks is what df says is used on the filesystem of dir, in bytes.
func usedBlocks(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}

// duUnique is what du says the trees under roots allocate together, each
// inode counted once (as du counts hard links), in bytes.
func duUnique(t *testing.T, roots ...string) int64 {
	t.Helper()
	seen := map[[2]uint64]bool{}
	var total int64
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				return err
			}
			k := [2]uint64{uint64(st.Dev), st.Ino}
			if !seen[k] {
				seen[k] = true
				total += st.Blocks * 512
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return total
}

func snapInode(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func verifyTree(t *testing.T, src, dst string) {
	t.Helper()
	rep, err := treeverify.CompareTrees(context.Background(), src, dst, treeverify.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("%s does not verify against the source: %v", dst, rep.Diffs)
	}
}

// Seven daily snapshots of an unchanged tree of 1,000 files with
// --link-dest to the day before take the blocks of about one: every file
// of a later day is a hard link to the first day's copy. Each snapshot
// verifies against the source. A file changed between two days is a new
// copy in the later one while the earlier keeps its old content, and a
// file of the previous snapshot whose content was changed in place with
// its size and mtime kept is not linked to.
func TestLinkDestSnapshots(t *testing.T) {
	vol := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 192 << 20})
	src := filepath.Join(t.TempDir(), "src")
	files := genTree(t, src, 1000, 7)
	db := filepath.Join(t.TempDir(), "hashes.db")
	settleSources()

	base := usedBlocks(t, vol.Dir)
	day := func(i int) string { return vol.Path(fmt.Sprintf("day%d", i)) }
	run := func(i int, linkDest ...string) copyengine.Summary {
		t.Helper()
		sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: day(i), LinkDest: linkDest})
		if err != nil {
			t.Fatalf("day %d: %v (%+v)", i, err, sum.Failures)
		}
		return sum
	}
	first := run(1)
	if first.Copied != int64(len(files)) {
		t.Fatalf("day 1 copied %d files, want %d", first.Copied, len(files))
	}
	one := usedBlocks(t, vol.Dir) - base
	verifyTree(t, src, day(1))

	// The changed file: another size, so that the rsync rule alone
	// would tell it too; the old content stays in the earlier days.
	var changed string
	for rel, data := range files {
		if len(data) > 100 {
			changed = rel
			break
		}
	}
	for i := 2; i <= 7; i++ {
		if i == 5 {
			writeFile(t, filepath.Join(src, changed), []byte("changed on day 5"))
			settleSources()
		}
		// A relative --link-dest is relative to DEST.
		sum := run(i, "../"+filepath.Base(day(i-1)))
		wantLinked := int64(len(files))
		if i == 5 {
			wantLinked--
			if sum.Copied != 1 {
				t.Errorf("day 5 copied %d files, want the changed one", sum.Copied)
			}
		} else if sum.Copied != 0 {
			t.Errorf("day %d copied %d files, want 0", i, sum.Copied)
		}
		if sum.LinkDest != wantLinked {
			t.Errorf("day %d: %d files linked to the day before, want %d", i, sum.LinkDest, wantLinked)
		}
		verifyTree(t, src, day(i))
	}
	seven := usedBlocks(t, vol.Dir) - base
	var roots []string
	for i := 1; i <= 7; i++ {
		roots = append(roots, day(i))
	}
	du1, du7 := duUnique(t, day(1)), duUnique(t, roots...)
	t.Logf("df: one snapshot %d KiB, seven %d KiB; du: one %d KiB, seven %d KiB", one>>10, seven>>10, du1>>10, du7>>10)
	if float64(seven) >= 1.5*float64(one) {
		t.Errorf("df: seven snapshots use %d bytes, one %d: want less than 1.5x", seven, one)
	}
	if float64(du7) >= 1.5*float64(du1) {
		t.Errorf("du: seven snapshots use %d bytes, one %d: want less than 1.5x", du7, du1)
	}
	if got, _ := os.ReadFile(filepath.Join(day(4), changed)); string(got) != string(files[changed]) {
		t.Errorf("day 4's %q lost its old content", changed)
	}
	if snapInode(t, filepath.Join(day(4), changed)) == snapInode(t, filepath.Join(day(5), changed)) {
		t.Errorf("%q changed on day 5 is still linked to day 4's copy", changed)
	}
	if snapInode(t, filepath.Join(day(1), changed)) != snapInode(t, filepath.Join(day(4), changed)) {
		t.Errorf("%q unchanged from day 1 to 4 is not one inode", changed)
	}

	// Day 7's copy of a file is rewritten in place: the same size, its
	// mtime put back, so its cache entry no longer holds (its ctime
	// moved). Day 8 must read it, find it differs, and copy.
	var victim string
	for rel, data := range files {
		if rel != changed && len(data) > 100 {
			victim = rel
			break
		}
	}
	vp := filepath.Join(day(7), victim)
	fi, err := os.Stat(vp)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(strings.Repeat("x", len(files[victim])))
	if err := os.WriteFile(vp, bad, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(vp, time.Now(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	for _, cached := range []bool{true, false} {
		i := 8
		opt := copyengine.Options{Sources: []string{src}, Dest: day(i), LinkDest: []string{day(7)}}
		var sum copyengine.Summary
		if cached {
			sum, err = runCached(t, db, opt)
		} else {
			i = 9
			opt.Dest = day(i)
			sum, err = runEngine(t, opt)
		}
		if err != nil {
			t.Fatal(err)
		}
		if sum.Copied != 1 || sum.LinkDest != int64(len(files)-1) {
			t.Errorf("day %d (cache %v): copied %d, linked %d; want the rewritten file copied, the rest linked", i, cached, sum.Copied, sum.LinkDest)
		}
		if snapInode(t, filepath.Join(day(i), victim)) == snapInode(t, vp) {
			t.Errorf("day %d (cache %v): %q was linked to day 7's rewritten copy", i, cached, victim)
		}
		verifyTree(t, src, day(i))
	}
}

// A --link-dest directory on another filesystem than DEST cannot be
// linked to: each file that matches there is copied, and said so.
func TestLinkDestOtherFilesystem(t *testing.T) {
	vol := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	other := loopfs.Tmpfs(t, 16<<20)
	src := filepath.Join(t.TempDir(), "src")
	files := genTree(t, src, 20, 3)
	settleSources()
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: other.Path("snap")}); err != nil {
		t.Fatal(err)
	}
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: vol.Path("snap"), LinkDest: []string{other.Path("snap")}, OnEvent: ev.record})
	if err != nil {
		t.Fatal(err)
	}
	if sum.LinkDest != 0 || sum.Copied != int64(len(files)) {
		t.Errorf("linked %d, copied %d; want every file copied", sum.LinkDest, sum.Copied)
	}
	said := 0
	for _, e := range ev.all {
		if e.Action == copyengine.ActLinkDestCopy && e.Err != nil && strings.Contains(e.Err.Error(), "another filesystem") {
			said++
		}
	}
	if said != len(files) {
		t.Errorf("%d files said why they were not linked, want %d: %v", said, len(files), sum.LinkDestNotes)
	}
	verifyTree(t, src, vol.Path("snap"))
}
