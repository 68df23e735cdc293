//go:build linux

package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// scrubSnapshot copies src into a first snapshot snap1 on a loop-mounted
// ext4 with the cache db, and returns the filesystem.
// scrubRottenSnapshot makes a source holding photo.raw (size bytes of
// pattern seed, old times), its first snapshot snap1 on a loop ext4 with
// the hash cache db, and rots snap1/photo.raw under an unchanged stat.
func scrubRottenSnapshot(t *testing.T, seed int64, size int) (src, db string, fs *loopfs.FS, data []byte) {
	t.Helper()
	src = scratchDir(t)
	data = pattern(seed, size)
	writeFile(t, filepath.Join(src, "photo.raw"), data)
	setTimes(t, filepath.Join(src, "photo.raw"), oldTime)
	db = filepath.Join(t.TempDir(), "hashes.db")
	settleSources()
	fs = scrubSnapshot(t, src, db)
	rot(t, fs, fs.Path("snap1", "photo.raw"))
	return src, db, fs, data
}

func scrubSnapshot(t *testing.T, src, db string) *loopfs.FS {
	t.Helper()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: fs.Path("snap1")}); err != nil || sum.Copied == 0 {
		t.Fatalf("first snapshot: %v, copied %d (%v)", err, sum.Copied, sum.Failures)
	}
	return fs
}

// scrubNamed reports whether one of notes names rel.
func scrubNamed(notes []string, rel string) bool {
	for _, n := range notes {
		if strings.Contains(n, rel) {
			return true
		}
	}
	return false
}

// A snapshot's file rots on the device with its stat unchanged (one block
// overwritten below the filesystem, its cached pages dropped). The next
// snapshot with --link-dest to it must not link to it on the strength of
// its cache entry: the counterpart is read, found to differ, and the file
// is copied from the source, and the rot is named.
func TestScrubLinkDestReadsCounterpart(t *testing.T) {
	src, db, fs, data := scrubRottenSnapshot(t, 501, 256<<10)

	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: fs.Path("snap2"), LinkDest: []string{"../snap1"}})
	if err != nil {
		t.Fatalf("second snapshot: %v (%v)", err, sum.Failures)
	}
	got, err := os.ReadFile(fs.Path("snap2", "photo.raw"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("snap2/photo.raw differs from its source (linked %d, %d B hashed): it was linked to the rotten snap1/photo.raw", sum.LinkDest, sum.BytesHashed)
	}
	if sum.LinkDest != 0 || sum.Copied != 1 {
		t.Errorf("linked %d, copied %d; want the file copied, not linked", sum.LinkDest, sum.Copied)
	}
	if !scrubNamed(sum.Rotten, "photo.raw") {
		t.Errorf("the rot of snap1/photo.raw is not named: rotten %q, notes %q", sum.Rotten, sum.LinkDestNotes)
	}
}

// --move --link-dest: a source whose copy in the new snapshot is a link
// into the earlier one (its bytes read from the device and found to hold
// the source's digest) is a verified copy in DEST, and is removed like
// any other; a changed file is copied, and its source removed too.
func TestScrubMoveLinkDest(t *testing.T) {
	src := scratchDir(t)
	files := map[string][]byte{"a.raw": pattern(511, 64<<10), "sub/b.raw": pattern(512, 96<<10)}
	writeFiles(t, src, files)
	for rel := range files {
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	db := filepath.Join(t.TempDir(), "hashes.db")
	settleSources()
	fs := scrubSnapshot(t, src, db)
	changed := pattern(513, 10<<10)
	writeFile(t, filepath.Join(src, "c.raw"), changed)
	settleSources()

	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: fs.Path("snap2"), LinkDest: []string{"../snap1"}, Move: true})
	if err != nil {
		t.Fatalf("--move --link-dest: %v (%v)", err, sum.Failures)
	}
	if sum.LinkDest != 2 || sum.Copied != 1 {
		t.Fatalf("linked %d, copied %d; want 2 linked, 1 copied", sum.LinkDest, sum.Copied)
	}
	if sum.SourcesRemoved != 3 || sum.SourcesKept != 0 {
		t.Errorf("sources removed %d, kept %d (%q); want all 3 removed: a link into the earlier snapshot is a verified copy", sum.SourcesRemoved, sum.SourcesKept, sum.MoveKept)
	}
	files["c.raw"] = changed
	for rel, data := range files {
		if _, err := os.Lstat(filepath.Join(src, rel)); !os.IsNotExist(err) {
			t.Errorf("source %s still there (%v)", rel, err)
		}
		got, err := os.ReadFile(fs.Path("snap2", rel))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("snap2/%s does not hold its source's bytes (%v)", rel, err)
		}
	}
}

// scrubCopy copies src to dst with the cache db and opt's scrub settings,
// and fails the test on an error.
func scrubCopy(t *testing.T, db, src, dst string, age time.Duration, max int64) copyengine.Summary {
	t.Helper()
	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst, Scrub: age, ScrubMax: max})
	if err != nil {
		t.Fatalf("run into %s: %v (%v)", dst, err, sum.Failures)
	}
	return sum
}

// A plain rerun skips a DEST file the cache vouches for, unread, even
// when it rotted on the device with its stat unchanged. --scrub reads it
// from the device, finds it rotten, names it and copies it again from
// the source, which still holds the recorded digest; the next scrub
// finds it sound. An age no file has reached reads nothing.
func TestScrubRepairsSkippedFile(t *testing.T) {
	src := scratchDir(t)
	data := pattern(521, 256<<10)
	other := pattern(522, 128<<10)
	writeFiles(t, src, map[string][]byte{"photo.raw": data, "other.raw": other})
	setTimes(t, filepath.Join(src, "photo.raw"), oldTime)
	setTimes(t, filepath.Join(src, "other.raw"), oldTime)
	db := filepath.Join(t.TempDir(), "hashes.db")
	settleSources()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	dst := fs.Path("dst")
	if sum := scrubCopy(t, db, src, dst, 0, 0); sum.Copied != 2 {
		t.Fatalf("first run copied %d, want 2", sum.Copied)
	}
	if sum := scrubCopy(t, db, src, dst, 0, 0); sum.Skipped != 2 || sum.BytesHashed != 0 {
		t.Fatalf("plain rerun: skipped %d, %d B hashed; want both skipped unread", sum.Skipped, sum.BytesHashed)
	}
	rot(t, fs, filepath.Join(dst, "photo.raw"))

	if sum := scrubCopy(t, db, src, dst, 24*time.Hour, 0); sum.Scrubbed != 0 || len(sum.Rotten) != 0 {
		t.Errorf("--scrub 24h right after the copy read %d files (rotten %q); want none due", sum.Scrubbed, sum.Rotten)
	}
	sum := scrubCopy(t, db, src, dst, time.Nanosecond, 0)
	if sum.Scrubbed != 2 || sum.BytesScrubbed != int64(len(data)+len(other)) {
		t.Errorf("scrubbed %d files, %d B; want both, %d B", sum.Scrubbed, sum.BytesScrubbed, len(data)+len(other))
	}
	if len(sum.Rotten) != 1 || !scrubNamed(sum.Rotten, "photo.raw") || !scrubNamed(sum.Rotten, "copied again") {
		t.Errorf("rotten %q; want photo.raw named, copied again", sum.Rotten)
	}
	if sum.Copied != 1 || sum.Skipped != 1 {
		t.Errorf("copied %d, skipped %d; want photo.raw copied again, other.raw skipped", sum.Copied, sum.Skipped)
	}
	got, err := os.ReadFile(filepath.Join(dst, "photo.raw"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("dst/photo.raw still differs from its source after --scrub (rotten %q, scrubbed %d)", sum.Rotten, sum.Scrubbed)
	}
	if sum := scrubCopy(t, db, src, dst, time.Nanosecond, 0); sum.Scrubbed != 2 || len(sum.Rotten) != 0 || sum.Copied != 0 {
		t.Errorf("the scrub after the repair: scrubbed %d, rotten %q, copied %d; want both read and sound", sum.Scrubbed, sum.Rotten, sum.Copied)
	}
}

// A rotten DEST file whose source no longer holds the recorded digest
// either (both rotted under unchanged stats) is not copied either way:
// it fails, named, and both stay as they were.
func TestScrubSourceChangedToo(t *testing.T) {
	sfs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	src := sfs.Path("src")
	data := pattern(531, 128<<10)
	writeFile(t, filepath.Join(src, "photo.raw"), data)
	setTimes(t, filepath.Join(src, "photo.raw"), oldTime)
	db := filepath.Join(t.TempDir(), "hashes.db")
	settleSources()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	dst := fs.Path("dst")
	scrubCopy(t, db, src, dst, 0, 0)
	rot(t, fs, filepath.Join(dst, "photo.raw"))
	rot(t, sfs, filepath.Join(src, "photo.raw"))
	srcNow, _ := os.ReadFile(filepath.Join(src, "photo.raw"))
	dstNow, _ := os.ReadFile(filepath.Join(dst, "photo.raw"))

	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst, Scrub: time.Nanosecond})
	if !errors.Is(err, copyengine.ErrSomeFailed) || sum.Failed != 1 {
		t.Fatalf("Run: %v, failed %d; want photo.raw failed", err, sum.Failed)
	}
	if !strings.Contains(sum.Failures[0].Err, "rotten on the device") || !scrubNamed(sum.Rotten, "photo.raw") {
		t.Errorf("failure %v, rotten %q; want photo.raw failed as rotten and named", sum.Failures[0].Err, sum.Rotten)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "photo.raw")); !bytes.Equal(got, dstNow) || sum.Copied != 0 {
		t.Errorf("dst/photo.raw was replaced (copied %d) by a source that does not hold its recorded digest", sum.Copied)
	}
	if got, _ := os.ReadFile(filepath.Join(src, "photo.raw")); !bytes.Equal(got, srcNow) {
		t.Errorf("the source changed")
	}
}

// --scrub reads the files whose last read from the device is oldest
// first, within --scrub-max: with three files rotten and a budget of
// one and a half files, each run reads, finds and repairs one, in the
// order they were last read, and the fourth run starts over.
func TestScrubBudgetOldestFirst(t *testing.T) {
	src := scratchDir(t)
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	dst := fs.Path("dst")
	db := filepath.Join(t.TempDir(), "hashes.db")
	names := []string{"c.raw", "a.raw", "b.raw"} // the order they are first copied in, not their names'
	const size = 100 << 10
	for i, n := range names {
		writeFile(t, filepath.Join(src, n), pattern(int64(541+i), size))
		setTimes(t, filepath.Join(src, n), oldTime)
		settleSources()
		if sum := scrubCopy(t, db, src, dst, 0, 0); sum.Copied != 1 {
			t.Fatalf("copying %s: copied %d", n, sum.Copied)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, n := range names {
		rot(t, fs, filepath.Join(dst, n))
	}
	for i, n := range names {
		sum := scrubCopy(t, db, src, dst, time.Nanosecond, size*3/2)
		if sum.Scrubbed != 1 || len(sum.Rotten) != 1 || !scrubNamed(sum.Rotten, n) || sum.Copied != 1 {
			t.Errorf("scrub %d: scrubbed %d, rotten %q, copied %d; want %s alone read, rotten and copied again", i+1, sum.Scrubbed, sum.Rotten, sum.Copied, n)
		}
	}
	if sum := scrubCopy(t, db, src, dst, time.Nanosecond, size*3/2); sum.Scrubbed != 1 || len(sum.Rotten) != 0 {
		t.Errorf("fourth scrub: scrubbed %d, rotten %q; want one sound file read", sum.Scrubbed, sum.Rotten)
	}
	sameTree(t, src, dst)
}

// A rotten DEST file whose source has since changed (another size) is
// copied as any changed file, and named with what was done.
func TestScrubRottenSourceRewritten(t *testing.T) {
	src := scratchDir(t)
	writeFile(t, filepath.Join(src, "photo.raw"), pattern(551, 128<<10))
	setTimes(t, filepath.Join(src, "photo.raw"), oldTime)
	db := filepath.Join(t.TempDir(), "hashes.db")
	settleSources()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	dst := fs.Path("dst")
	scrubCopy(t, db, src, dst, 0, 0)
	rot(t, fs, filepath.Join(dst, "photo.raw"))
	edited := pattern(552, 64<<10)
	writeFile(t, filepath.Join(src, "photo.raw"), edited)
	settleSources()

	sum := scrubCopy(t, db, src, dst, time.Nanosecond, 0)
	if sum.Copied != 1 || len(sum.Rotten) != 1 || !scrubNamed(sum.Rotten, "its source changed since") {
		t.Errorf("copied %d, rotten %q; want photo.raw named rotten and copied as a changed file", sum.Copied, sum.Rotten)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "photo.raw")); !bytes.Equal(got, edited) {
		t.Errorf("dst/photo.raw is not the edited source")
	}
}
