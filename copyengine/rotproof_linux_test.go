//go:build linux

package copyengine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// --move over a DEST whose copy rotted on the device under an unchanged
// stat, both sides' cache entries valid: the copy is read from the device
// before its source may go, found rotten, named, copied again from the
// source (which holds its recorded digest), and only then is the source
// removed. Before, the file was skipped on the strength of the two cache
// entries and its source removed: the only good copy was lost.
func TestRotproofMoveRottenDest(t *testing.T) {
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	src, dst := fs.Path("src"), fs.Path("dst")
	data := pattern(601, 30000)
	writeFile(t, filepath.Join(src, "k"), data)
	setTimes(t, filepath.Join(src, "k"), oldTime)
	db := filepath.Join(t.TempDir(), "hashes.db")
	settleSources()
	if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 1 {
		t.Fatalf("first copy: %v, copied %d (%v)", err, sum.Copied, sum.Failures)
	}
	rot(t, fs, filepath.Join(dst, "k"))

	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true})
	if err != nil {
		t.Fatalf("--move: %v (%v)", err, sum.Failures)
	}
	got, rerr := os.ReadFile(filepath.Join(dst, "k"))
	_, serr := os.Lstat(filepath.Join(src, "k"))
	if rerr != nil || !bytes.Equal(got, data) {
		t.Fatalf("dst/k does not hold the source's bytes after --move (source there: %v; skipped %d, copied %d, removed %d, %d digests from cache, %d B hashed, rotten %q)",
			serr == nil, sum.Skipped, sum.Copied, sum.SourcesRemoved, sum.CacheHits, sum.BytesHashed, sum.Rotten)
	}
	if !scrubNamed(sum.Rotten, "k") {
		t.Errorf("the rot of dst/k is not named: rotten %q", sum.Rotten)
	}
	if sum.Copied != 1 || sum.SourcesRemoved != 1 || !os.IsNotExist(serr) {
		t.Errorf("copied %d, sources removed %d (source: %v); want k copied again, then its source removed", sum.Copied, sum.SourcesRemoved, serr)
	}
}

// A --move rerun over a sound DEST reads each unchanged file's copy from
// the device (its source's digest may come from the cache), and removes
// the source: one DEST read per file, none of the source.
func TestRotproofMoveSoundDestReadOnce(t *testing.T) {
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	src, dst := fs.Path("src"), fs.Path("dst")
	files := map[string][]byte{"a": pattern(611, 40000), "b/c": pattern(612, 70000)}
	writeFiles(t, src, files)
	for rel := range files {
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	db := filepath.Join(t.TempDir(), "hashes.db")
	settleSources()
	if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 2 {
		t.Fatalf("first copy: %v, copied %d (%v)", err, sum.Copied, sum.Failures)
	}
	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true})
	if err != nil {
		t.Fatalf("--move: %v (%v)", err, sum.Failures)
	}
	if sum.Skipped != 2 || sum.SourcesRemoved != 2 || len(sum.Rotten) != 0 {
		t.Errorf("skipped %d, removed %d, rotten %q; want both skipped and removed", sum.Skipped, sum.SourcesRemoved, sum.Rotten)
	}
	if want := int64(40000 + 70000); sum.BytesHashed != want || sum.CacheHits != 2 {
		t.Errorf("%d B hashed, %d digests from cache; want %d B (each DEST copy read once), 2 (the sources')", sum.BytesHashed, sum.CacheHits, want)
	}
}

// rotproofScrubExcl is a --scrub run of src into dst with the cache db,
// k left out of it.
func rotproofScrub(t *testing.T, db, src, dst string, opt copyengine.Options) copyengine.Summary {
	t.Helper()
	opt.Sources, opt.Dest, opt.Scrub = []string{src}, dst, time.Nanosecond
	sum, err := runCached(t, db, opt)
	if err != nil {
		t.Fatalf("--scrub: %v (%v)", err, sum.Failures)
	}
	return sum
}

// A rotten DEST file --scrub could not repair (left out of the run, or
// left alone by -u) stays rotten in the cache: every later scrub names it
// again, and so does a run that meets it (which repairs it).
func TestRotproofScrubKeepsRotFlagged(t *testing.T) {
	for _, tc := range []struct {
		name string
		says string // what the warning says was done
		opt  copyengine.Options
		prep func(t *testing.T, src string)
	}{
		{"exclude", "left out of the run): not repaired", copyengine.Options{Excludes: []string{"k"}}, nil},
		{"update", "left alone by -u", copyengine.Options{Update: true}, func(t *testing.T, src string) {
			setTimes(t, filepath.Join(src, "k"), oldTime.Add(-time.Hour)) // older than its copy: -u leaves it
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
			src, dst := fs.Path("src"), fs.Path("dst")
			data := pattern(621, 30000)
			writeFiles(t, src, map[string][]byte{"k": data, "o": []byte("o\n")})
			setTimes(t, filepath.Join(src, "k"), oldTime)
			setTimes(t, filepath.Join(src, "o"), oldTime)
			db := filepath.Join(t.TempDir(), "hashes.db")
			settleSources()
			if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 2 {
				t.Fatalf("first copy: %v, copied %d (%v)", err, sum.Copied, sum.Failures)
			}
			rot(t, fs, filepath.Join(dst, "k"))
			if tc.prep != nil {
				tc.prep(t, src)
				settleSources()
			}
			for run := 1; run <= 3; run++ {
				sum := rotproofScrub(t, db, src, dst, tc.opt)
				if !scrubNamed(sum.Rotten, "k") {
					t.Fatalf("scrub %d: the rotten dst/k is not named (rotten %q, scrubbed %d, copied %d)", run, sum.Rotten, sum.Scrubbed, sum.Copied)
				}
				if !scrubNamed(sum.Rotten, tc.says) || sum.Copied != 0 {
					t.Errorf("scrub %d: rotten %q, copied %d; want it said %q, nothing copied", run, sum.Rotten, sum.Copied, tc.says)
				}
			}
			// A run that meets it (plain, not excluded, no -u) names it
			// and copies it again from the source.
			if tc.prep != nil {
				setTimes(t, filepath.Join(src, "k"), oldTime)
				settleSources()
			}
			sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst})
			if err != nil {
				t.Fatalf("plain run: %v (%v)", err, sum.Failures)
			}
			if !scrubNamed(sum.Rotten, "k") || sum.Copied != 1 {
				t.Errorf("plain run: rotten %q, copied %d; want k named and copied again", sum.Rotten, sum.Copied)
			}
			if got, err := os.ReadFile(filepath.Join(dst, "k")); err != nil || !bytes.Equal(got, data) {
				t.Errorf("dst/k not repaired (%v)", err)
			}
			if sum := rotproofScrub(t, db, src, dst, copyengine.Options{}); len(sum.Rotten) != 0 || sum.Scrubbed != 2 {
				t.Errorf("scrub after the repair: rotten %q, scrubbed %d; want both read and sound", sum.Rotten, sum.Scrubbed)
			}
		})
	}
}

// A --link-dest counterpart found rotten stays marked: the next snapshot
// that links to the same earlier one names it again (before, its entry
// was set to the rotten bytes' digest, and the next run took them for
// the file's own).
func TestRotproofLinkDestRotNamedAgain(t *testing.T) {
	src, db, fs, data := scrubRottenSnapshot(t, 631, 64<<10)
	for _, snap := range []string{"snap2", "snap3"} {
		sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: fs.Path(snap), LinkDest: []string{"../snap1"}})
		if err != nil {
			t.Fatalf("%s: %v (%v)", snap, err, sum.Failures)
		}
		if !scrubNamed(sum.Rotten, "snap1/photo.raw") || sum.LinkDest != 0 {
			t.Errorf("%s: rotten %q, linked %d; want snap1/photo.raw named again, not linked to", snap, sum.Rotten, sum.LinkDest)
		}
		if got, err := os.ReadFile(fs.Path(snap, "photo.raw")); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s/photo.raw does not hold its source's bytes (%v)", snap, err)
		}
	}
}
