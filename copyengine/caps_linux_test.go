package copyengine_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/loopfs"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestLinksWithoutHardLinks copies a source file with three names to
// exFAT, which has no hard links: each further name becomes a verified
// copy of its own, named in the summary and by its event, instead of a
// failed link(2) on every run. The rerun finds all three in place.
func TestLinksWithoutHardLinks(t *testing.T) {
	t.Parallel()
	fs := mountExfat(t)
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "hard1"), pattern(31, 100000))
	writeFile(t, filepath.Join(src, "other"), pattern(32, 5000))
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sub/hard2", "hard3"} {
		if err := os.Link(filepath.Join(src, "hard1"), filepath.Join(src, n)); err != nil {
			t.Fatal(err)
		}
	}
	dst := fs.path("dst")
	var ev events
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record}
	sum, err := runEngine(t, opt)
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 4 || sum.LinkCopies != 2 || sum.Linked != 0 || sum.Failed != 0 {
		t.Errorf("copied %d, %d hard links as copies, %d linked, %d failed; want 4, 2, 0, 0", sum.Copied, sum.LinkCopies, sum.Linked, sum.Failed)
	}
	var copies []string
	for _, e := range ev.all {
		if e.Action == copyengine.ActLinkCopy {
			copies = append(copies, e.Path)
		}
	}
	slices.Sort(copies)
	paths := slices.Sorted(slices.Values(sum.LinkCopyPaths))
	if len(copies) != 2 || !slices.Equal(copies, paths) {
		t.Errorf("link-copy events for %q, summary names %q; want the same two of hard1, hard3, sub/hard2", copies, paths)
	}
	if !notedOnce(sum.NotKept, "hard links: ") {
		t.Errorf("not kept: %q; want one note on hard links", sum.NotKept)
	}
	t.Logf("not kept: %q", sum.NotKept)
	sameTree(t, src, dst)
	noTemps(t, dst)

	fs.remount()
	sum, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
	if err != nil {
		t.Fatalf("rerun: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 0 || sum.Skipped != 4 {
		t.Errorf("rerun: copied %d, skipped %d; want 0, 4", sum.Copied, sum.Skipped)
	}
	noTemps(t, dst)
}

// TestTooLargeForFAT copies a sparse file of 4 GiB + 1 byte and a small
// file to FAT32 (through fusefat, as this kernel has no vfat module): the
// large one is refused by name before any byte is written, exit 3 for it
// alone, and the small one is copied.
func TestTooLargeForFAT(t *testing.T) {
	t.Parallel()
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.FuseFAT, Size: 64 << 20})
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "small"), pattern(51, 3000))
	big := filepath.Join(src, "big.mkv")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(4<<30 + 1)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	dst := fs.Path("dst")
	var st copyengine.Stats
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Stats: &st})
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatalf("Run: %v (failures %v); want some failed", err, sum.Failures)
	}
	if len(sum.Failures) != 1 || sum.Failures[0].Path != "big.mkv" || !strings.Contains(sum.Failures[0].Err, "at most 4294967295 bytes") {
		t.Errorf("failures %v; want big.mkv alone, refused for FAT's 4 GiB - 1 limit", sum.Failures)
	} else {
		t.Logf("refused: %s", sum.Failures[0].Err)
	}
	if sum.Copied != 1 {
		t.Errorf("copied %d files, want the small one", sum.Copied)
	}
	if w := st.BytesWritten.Load(); w != 3000 {
		t.Errorf("%d bytes written, want 3000: the small file's and none of the large one's", w)
	}
	names, err := os.ReadDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != "small" {
		t.Errorf("the destination holds %v; want only small", names)
	}
}

// TestNotKeptOnFAT copies, as root, a tree with a symlink, files owned by
// another user and a mode FAT cannot hold to FAT32 (fusefat, which
// answers chown, chmod and symlink with ENOSYS): the files are copied and
// verified, and what FAT cannot keep is said once per kind in the summary
// with the filesystem, not as a failure of every entry.
func TestNotKeptOnFAT(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipping: giving files another owner needs root")
	}
	fs := loopfs.MountFUSE(t, loopfs.FUSEConfig{Type: loopfs.FuseFAT, Size: 64 << 20})
	src := filepath.Join(scratchDir(t), "src")
	for i, n := range []string{"a", "sub/b", "sub/c"} {
		p := filepath.Join(src, n)
		writeFile(t, p, pattern(int64(60+i), 1000+i))
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"link1", "sub/link2"} {
		if err := os.Symlink("a", filepath.Join(src, n)); err != nil {
			t.Fatal(err)
		}
	}
	dst := fs.Path("dst")
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	t.Logf("not kept: %q", sum.NotKept)
	if sum.Copied != 3 || sum.Failed != 0 {
		t.Errorf("copied %d, failed %d; want 3, 0", sum.Copied, sum.Failed)
	}
	for _, kind := range []string{"symlinks: ", "owners: "} {
		n := 0
		for _, note := range sum.NotKept {
			if strings.HasPrefix(note, kind) && strings.Contains(note, "fuse.fusefat") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d notes start %q and name the filesystem; want 1", n, kind)
		}
	}
	notKept := 0
	for _, e := range ev.all {
		if e.Action == copyengine.ActNotKept {
			notKept++
		}
	}
	if notKept != 2 {
		t.Errorf("%d not-kept events, want one per symlink", notKept)
	}
	finalFilesMatch(t, src, dst)
}

// TestACLsNotKeptOnExfat copies files with POSIX ACLs to exFAT, which
// has no extended attributes: the files are copied, and the lost ACLs are
// said once, naming the filesystem, instead of silently.
func TestACLsNotKeptOnExfat(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setfacl"); err != nil {
		t.Skip("skipping: setfacl is not installed (Debian: apt-get install acl)")
	}
	fs := mountExfat(t)
	src := filepath.Join(scratchDir(t), "src")
	for i, n := range []string{"a", "b"} {
		p := filepath.Join(src, n)
		writeFile(t, p, pattern(int64(70+i), 500+i))
		if out, err := exec.Command("setfacl", "-m", "u:nobody:rw", p).CombinedOutput(); err != nil {
			t.Skipf("skipping: setfacl on the source: %v: %s", err, out)
		}
	}
	dst := fs.path("dst")
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	t.Logf("not kept: %q", sum.NotKept)
	n := 0
	for _, note := range sum.NotKept {
		if strings.HasPrefix(note, "POSIX ACLs: ") && strings.Contains(note, "not kept on 2 entries") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("not kept %q; want one note on the two files' ACLs", sum.NotKept)
	}
	sameTree(t, src, dst)
}

// notedOnce reports whether exactly one of the not-kept notes starts with
// prefix.
func notedOnce(notes []string, prefix string) bool {
	n := 0
	for _, note := range notes {
		if strings.HasPrefix(note, prefix) {
			n++
		}
	}
	return n == 1
}

// TestLinksNotKeptOnRerun: a rerun to exFAT that finds the separate copies
// of a linked source file in place still says the hard links are not kept
// (--strict exits 6 on it as on the first run), once.
func TestLinksNotKeptOnRerun(t *testing.T) {
	t.Parallel()
	fs := mountExfat(t)
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "a"), pattern(33, 4000))
	if err := os.Link(filepath.Join(src, "a"), filepath.Join(src, "b")); err != nil {
		t.Fatal(err)
	}
	dst := fs.path("dst")
	for run := 1; run <= 2; run++ {
		sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
		if err != nil {
			t.Fatalf("run %d: %v (failures %v)", run, err, sum.Failures)
		}
		t.Logf("run %d: copied %d, skipped %d; not kept: %q", run, sum.Copied, sum.Skipped, sum.NotKept)
		if !notedOnce(sum.NotKept, "hard links: ") {
			t.Errorf("run %d: not kept %q; want one note on hard links", run, sum.NotKept)
		}
	}
}

// TestModesNotKeptOnExfat: exfat-fuse accepts chmod and keeps nothing (a
// 0600 file shows 0777): the lost permission bits are said, on the first
// run and on the rerun that finds the file in place.
func TestModesNotKeptOnExfat(t *testing.T) {
	t.Parallel()
	fs := mountExfat(t)
	src := filepath.Join(scratchDir(t), "src")
	p := filepath.Join(src, "private")
	writeFile(t, p, pattern(34, 3000))
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := fs.path("dst")
	for run := 1; run <= 2; run++ {
		sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
		if err != nil {
			t.Fatalf("run %d: %v (failures %v)", run, err, sum.Failures)
		}
		st, err := os.Stat(filepath.Join(dst, "private"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d: the copy shows mode %04o; not kept: %q", run, st.Mode().Perm(), sum.NotKept)
		if st.Mode().Perm() != 0o600 && !notedOnce(sum.NotKept, "permission bits: ") {
			t.Errorf("run %d: not kept %q; want one note on permission bits", run, sum.NotKept)
		}
	}
}
