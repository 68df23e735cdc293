package copyengine_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/verify"
)

// needCut skips a test that cuts power to a filesystem where it cannot.
func needCut(t *testing.T) {
	t.Helper()
	if err := loopfs.CanCut(); err != nil {
		if os.Getenv(loopfs.RequireEnv) != "" {
			t.Fatalf("%v (and %s is set)", err, loopfs.RequireEnv)
		}
		t.Skipf("skipping: %v", err)
	}
}

// TestPowerCutMountInsideDest: a filesystem mounted inside DEST is flushed
// as DEST's own is. DEST is on ext4 with an xfs filesystem mounted at
// DEST/photos; right after the run exits 0 the xfs filesystem loses power
// (shut down without writing its log) and is mounted again: every file the
// run reported must be there, whole.
func TestPowerCutMountInsideDest(t *testing.T) {
	t.Parallel()
	needCut(t)
	outer := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	dst := outer.Path("dst")
	photos := filepath.Join(dst, "photos")
	if err := os.MkdirAll(photos, 0o755); err != nil {
		t.Fatal(err)
	}
	inner, err := loopfs.Attach(loopfs.Config{Type: "xfs", Size: 300 << 20}, filepath.Join(t.TempDir(), "inner.img"), photos)
	if err != nil {
		t.Skipf("skipping: cannot mount xfs inside DEST: %v", err)
	}
	t.Cleanup(func() {
		if err := inner.Detach(); err != nil {
			t.Error(err)
		}
	})

	src := filepath.Join(t.TempDir(), "src")
	for i := 0; i < 50; i++ {
		writeFile(t, filepath.Join(src, "photos", "album", flatName(i)), pattern(int64(i), 4096+i*1000))
	}
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src + "/"}, Dest: dst})
	if err != nil || sum.Copied != 50 {
		t.Fatalf("run: %v, %d copied (want 50)", err, sum.Copied)
	}
	if err := inner.Cut(false); err != nil {
		t.Fatal(err)
	}
	if err := inner.Remount(); err != nil {
		t.Fatal(err)
	}
	n := finalFilesMatch(t, filepath.Join(src, "photos"), photos)
	if n != 50 {
		t.Errorf("after the power cut %d of 50 files are in DEST/photos, though the run exited 0", n)
	}
}

// cutMode is one way of running fastcopy that the power-cut test tries.
type cutMode struct {
	name   string
	verify copyengine.VerifyMode
	noSync bool
}

var cutModes = []cutMode{
	{"default", copyengine.VerifyDevice, false},
	{"verify-off", copyengine.VerifyOff, false},
	{"verify-cache", copyengine.VerifyCache, false},
	{"no-sync", copyengine.VerifyDevice, true},
	{"no-sync+verify-off", copyengine.VerifyOff, true},
	{"no-sync+verify-cache", copyengine.VerifyCache, true},
}

// cutTree writes the mixed tree of the power-cut test under src: small
// files in nested directories, a few larger ones, hard links (one across
// directories), a symlink, a sparse file, extended attributes and
// duplicates (in one new directory and across two). It returns, for each
// directory, the names it holds.
func cutTree(t *testing.T, src string, seed int64) map[string][]string {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	dirs := []string{"", "a", "a/b", "a/b/c", "d", "d/e", "f"}
	for i := 0; i < 160; i++ {
		rel := filepath.Join(dirs[r.Intn(len(dirs))], fmt.Sprintf("s%03d", i))
		writeFile(t, filepath.Join(src, rel), pattern(seed*1000+int64(i), 1+r.Intn(16<<10)))
	}
	for i, size := range []int{1 << 20, 4 << 20, 9 << 20} {
		writeFile(t, filepath.Join(src, dirs[1+i], fmt.Sprintf("large%d", i)), pattern(seed*1000+500+int64(i), size))
	}
	// Hard links: two names in one directory, and one in another.
	writeFile(t, filepath.Join(src, "d", "h1"), pattern(seed*1000+600, 7000))
	noErr(t, os.Link(filepath.Join(src, "d", "h1"), filepath.Join(src, "d", "h2")))
	noErr(t, os.Link(filepath.Join(src, "d", "h1"), filepath.Join(src, "f", "h3")))
	noErr(t, os.Symlink("../d/h1", filepath.Join(src, "a", "link")))
	// Sparse: sized first, three islands of data.
	sp, err := os.Create(filepath.Join(src, "a", "b", "sparse"))
	noErr(t, err)
	noErr(t, sp.Truncate(16<<20))
	for i, off := range []int64{0, 5 << 20, 15 << 20} {
		_, err := sp.WriteAt(pattern(seed*1000+700+int64(i), 64<<10), off)
		noErr(t, err)
	}
	noErr(t, sp.Close())
	for _, rel := range []string{"s000", "a/b/c/x1", "f/x2"} {
		p := filepath.Join(src, rel)
		if _, err := os.Stat(p); err != nil {
			writeFile(t, p, pattern(seed*1000+800, 3000))
		}
		noErr(t, unix.Lsetxattr(p, "user.note", []byte("kept "+rel), 0))
	}
	// Duplicates, with one mtime, so that they may be linked or cloned.
	dup := pattern(seed*1000+900, 24<<10)
	when := time.Unix(1_600_000_000, 0)
	for _, rel := range []string{"d/e/dup1", "d/e/dup2", "d/e/dup3", "f/dup4", "a/b/c/dup5"} {
		p := filepath.Join(src, rel)
		writeFile(t, p, dup)
		noErr(t, os.Chtimes(p, when, when))
	}
	names := map[string][]string{}
	noErr(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		name := d.Name()
		if d.IsDir() {
			name += "/"
		}
		names[filepath.Dir(rel)] = append(names[filepath.Dir(rel)], name)
		return nil
	}))
	return names
}

// TestPowerCut cuts power to an xfs and an ext4 destination (xfs_io -x -c
// shutdown, with and without writing the log first) right after a run and
// at random moments during one, in every mode, and after each cut mounts
// it again and checks what fastcopy promises: no file under a final name
// differs from its source, no published directory lacks a name it holds
// once complete, the hash cache vouches for nothing the files do not
// hold, and a rerun completes the copy.
func TestPowerCut(t *testing.T) {
	t.Parallel()
	needCut(t)
	if testing.Short() {
		t.Skip("skipping: power cuts take a while (-short)")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	src := filepath.Join(scratchDir(t), "src")
	names := cutTree(t, src, seed)
	for _, typ := range []string{"xfs", "ext4"} {
		t.Run(typ, func(t *testing.T) {
			fsys := loopfs.Mount(t, loopfs.Config{Type: typ, Size: 300 << 20})
			for _, m := range cutModes {
				t.Run(m.name, func(t *testing.T) {
					// Right after exit, with the log lost and with it written;
					// then during the run, at a random moment of it.
					took := powerCutTrial(t, fsys, src, names, m, "after exit", -1, false)
					powerCutTrial(t, fsys, src, names, m, "after exit, log written", -1, true)
					for i := 0; i < 3; i++ {
						at := time.Duration(r.Int63n(int64(took) + 1))
						powerCutTrial(t, fsys, src, names, m, fmt.Sprintf("at %v", at), at, r.Intn(2) == 0)
					}
				})
			}
		})
	}
}

// runCutAt runs opt and calls cut (a power cut) at, or after the run when
// at < 0. It returns how long the run had until the cut and the run's error.
func runCutAt(t *testing.T, opt copyengine.Options, at time.Duration, cut func() error) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := runEngine(t, opt)
		done <- err
	}()
	var runErr error
	finished := false
	if at >= 0 {
		select {
		case runErr = <-done:
			finished = true
		case <-time.After(at):
		}
	} else {
		runErr, finished = <-done, true
	}
	took := time.Since(start)
	noErr(t, cut())
	if !finished {
		runErr = <-done // the run stops on the errors the shutdown gives it
	}
	return took, runErr
}

// powerCutTrial copies src into a fresh destination on fsys in mode m, cuts
// the power at (after the run when at < 0), remounts and checks. It returns
// how long the run took.
func powerCutTrial(t *testing.T, fsys *loopfs.FS, src string, names map[string][]string, m cutMode, what string, at time.Duration, logFlush bool) time.Duration {
	t.Helper()
	dst := fsys.Path("dst")
	noErr(t, os.RemoveAll(dst))
	db := filepath.Join(t.TempDir(), "hashes.db")
	opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Verify: m.verify, NoSync: m.noSync}
	hc, err := hashcache.Open(db, hashcache.Options{})
	noErr(t, err)
	opt.Cache = hc
	took, runErr := runCutAt(t, opt, at, func() error { return fsys.Cut(logFlush) })
	noErr(t, hc.Close())
	if at < 0 && runErr != nil {
		t.Fatalf("%s: the run before the cut failed: %v", what, runErr)
	}
	noErr(t, fsys.Remount())

	where := fmt.Sprintf("%s, cut %s", m.name, what)
	durable := at < 0 && !m.noSync // exit 0 promised that all is on disk
	if _, err := os.Lstat(dst); err != nil {
		if durable {
			t.Errorf("%s: DEST is gone: %v", where, err)
		}
		return took
	}
	checkAfterCut(t, where, src, dst, names, db, durable)

	// The rerun completes the copy.
	if _, err := runCached(t, db, opt); err != nil {
		t.Errorf("%s: the rerun failed: %v", where, err)
	}
	sameTree(t, src, dst)
	noTemps(t, dst)
	return took
}

// checkAfterCut checks a destination after a power cut: every regular file
// and symlink under a final name is its source's, every published
// directory holds all its files, symlinks and hard links (DEST itself, and
// the subdirectories, which are published on their own, only when
// durable: after a run that exited 0 without --no-sync), and every cache
// entry for a file in DEST that still matches its stat
// holds its digest.
func checkAfterCut(t *testing.T, where, src, dst string, names map[string][]string, db string, durable bool) {
	t.Helper()
	type file struct {
		rel string
		sum verify.Sum
	}
	byIno := map[uint64]file{}
	stats := map[uint64]unix.Stat_t{}
	bad := 0
	noErr(t, filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(d.Name(), tempSuffix) {
			if d.IsDir() {
				return fs.SkipDir // staged: not published
			}
			return nil
		}
		rel, _ := filepath.Rel(dst, p)
		if rel == madeRecordName {
			return nil
		}
		if d.IsDir() {
			// Published: the root holds what was renamed into it so far; a
			// directory the run made holds all its names.
			if rel != "." || durable {
				for _, name := range names[rel] {
					if strings.HasSuffix(name, "/") && !durable {
						continue // a subdirectory is published on its own
					}
					if _, err := os.Lstat(filepath.Join(p, name)); err != nil {
						t.Errorf("%s: %s is published without %s", where, rel, name)
					}
				}
			}
			return nil
		}
		sp := filepath.Join(src, rel)
		switch {
		case d.Type().IsRegular():
			got, err := os.ReadFile(p)
			noErr(t, err)
			want, err := os.ReadFile(sp)
			noErr(t, err)
			if !bytes.Equal(got, want) {
				bad++
				if bad <= 5 {
					t.Errorf("%s: %s under its final name differs from its source (%d bytes, source %d)", where, rel, len(got), len(want))
				}
			}
			var st unix.Stat_t
			noErr(t, unix.Lstat(p, &st))
			byIno[st.Ino] = file{rel, verify.Bytes(got)}
			stats[st.Ino] = st
		case d.Type()&fs.ModeSymlink != 0:
			got, _ := os.Readlink(p)
			want, _ := os.Readlink(sp)
			if got != want {
				t.Errorf("%s: symlink %s to %q, source to %q", where, rel, got, want)
			}
		}
		return nil
	}))
	if bad > 5 {
		t.Errorf("%s: %d files in all differ from their sources", where, bad)
	}
	hc, err := hashcache.Open(db, hashcache.Options{ReadOnly: true})
	noErr(t, err)
	defer hc.Close()
	hc.Range("", func(p string, e hashcache.Entry) bool {
		f, ok := byIno[e.Ino]
		if !ok {
			return true
		}
		st := stats[e.Ino]
		if e.Size == st.Size && e.Mtime == st.Mtim.Nano() && e.Ctime == st.Ctim.Nano() && e.Sum != f.sum {
			t.Errorf("%s: the cache vouches for %s (entry %s) with a digest its content does not have", where, f.rel, p)
		}
		return true
	})
}
