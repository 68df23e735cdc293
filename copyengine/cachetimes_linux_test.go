package copyengine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// rewriteKeepingTimes overwrites the start of the file at p with data, in
// place and without changing its size, and puts its atime and mtime back:
// what an editor or a bit of corruption that keeps times leaves.
func rewriteKeepingTimes(t *testing.T, p string, data []byte) {
	t.Helper()
	st := lstatT(t, p)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	noErr(t, err)
	_, err = f.WriteAt(data, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	noErr(t, err)
	noErr(t, os.Chtimes(p, time.Unix(0, st.Atim.Nano()), time.Unix(0, st.Mtim.Nano())))
}

// startOfSecond sleeps until just after the wall clock's next whole second.
func startOfSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
}

// TestWholeSecondDestRewriteKeptMtime: ext4 with 128-byte inodes stores
// whole-second ctimes. A copied file rewritten in place within the second
// of its copy, its mtime put back, has the very stat the cache recorded
// for it; the cache must not vouch for it (the entry was recorded within
// the ctime's resolution of the ctime), so verify and the rerun read it.
func TestWholeSecondDestRewriteKeptMtime(t *testing.T) {
	t.Parallel()
	vol := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20, Mkfs: []string{"-I", "128"}})
	src := filepath.Join(scratchDir(t), "src")
	good := []byte("original content\n")
	writeFile(t, filepath.Join(src, "doc.txt"), good)
	setTimes(t, filepath.Join(src, "doc.txt"), oldTime)
	settleSources()
	dst := vol.Path("dst")
	p := filepath.Join(dst, "doc.txt")
	opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst}
	var db string
	for attempt := 1; ; attempt++ {
		db = filepath.Join(t.TempDir(), "hashes.db")
		noErr(t, os.RemoveAll(dst))
		startOfSecond()
		cachedRun(t, db, opt)
		before := lstatT(t, p)
		rewriteKeepingTimes(t, p, []byte("ORIGINAL CONTENX"))
		after := lstatT(t, p)
		if after.Ctim == before.Ctim && after.Mtim == before.Mtim && after.Size == before.Size {
			break
		}
		if attempt == 3 {
			t.Fatalf("the rewrite never landed in the second of the copy (ctime %v then %v)", before.Ctim, after.Ctim)
		}
	}
	if rep := verifyCached(t, db, src, dst); rep.OK() {
		t.Errorf("verify with the cache: identical (%d digests from the cache); want doc.txt to differ", rep.Known)
	}
	sum := cachedRun(t, db, opt)
	if sum.Copied != 1 {
		t.Errorf("rerun: copied %d, skipped %d, %d cache hits; want doc.txt copied", sum.Copied, sum.Skipped, sum.CacheHits)
	}
	got, err := os.ReadFile(p)
	noErr(t, err)
	if string(got) != string(good) {
		t.Errorf("doc.txt holds %q after the rerun, want %q", got, good)
	}
}

// TestExfatDestRewriteKeptMtime: exFAT has no ctime (exfat-fuse reports the
// mtime) and no stable inode numbers, so a same-size rewrite with the mtime
// put back leaves nothing in the stat to show it. The cache must not vouch
// for such a file: verify with the cache and --checksum read it.
func TestExfatDestRewriteKeptMtime(t *testing.T) {
	t.Parallel()
	fs := mountExfat(t)
	src := filepath.Join(scratchDir(t), "src")
	good := []byte("original content\n")
	writeFile(t, filepath.Join(src, "doc.txt"), good)
	setTimes(t, filepath.Join(src, "doc.txt"), oldTime)
	settleSources()
	dst := fs.path("dst")
	db := filepath.Join(t.TempDir(), "hashes.db")
	opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst}
	cachedRun(t, db, opt)
	p := filepath.Join(dst, "doc.txt")
	rewriteKeepingTimes(t, p, []byte("ORIGINAL CONTENX"))

	// The plain rerun goes by size and mtime, as a copier without a cache
	// does (documented): it skips.
	if sum := cachedRun(t, db, opt); sum.Copied != 0 || sum.CacheHits != 0 {
		t.Errorf("rerun: copied %d, %d cache hits; want 0, 0 (size and mtime decide)", sum.Copied, sum.CacheHits)
	}
	if rep := verifyCached(t, db, src, dst); rep.OK() || rep.Known > 1 {
		t.Errorf("verify with the cache: %+v; want doc.txt to differ, its copy's digest not from the cache", rep)
	}
	opt.Checksum = true
	if sum := cachedRun(t, db, opt); sum.Copied != 1 {
		t.Errorf("--checksum: copied %d, skipped %d, %d cache hits; want doc.txt copied", sum.Copied, sum.Skipped, sum.CacheHits)
	}
	got, err := os.ReadFile(p)
	noErr(t, err)
	if string(got) != string(good) {
		t.Errorf("doc.txt holds %q after --checksum, want %q", got, good)
	}
}

// TestSourcePowerCutCacheEntry: a source file rewritten in place shortly
// before the run has its new stat committed by the journal while its data
// is still only in memory. A power cut of the SOURCE after the run brings
// back the old bytes under the new stat: the cache must not hold an entry
// vouching for the bytes the run read unless they reached the source's
// disk (the run flushes a source filesystem before it stores entries of
// its files).
func TestSourcePowerCutCacheEntry(t *testing.T) {
	t.Parallel()
	needCut(t)
	vol := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	src := vol.Path("src")
	f := filepath.Join(src, "f")
	writeFile(t, f, pattern(71, 1<<20))
	syncPath(t, f)
	syncPath(t, src)
	// Rewritten in place, not flushed: the stat changes in the running
	// journal transaction, the data in the page cache.
	fh, err := os.OpenFile(f, os.O_WRONLY, 0)
	noErr(t, err)
	_, err = fh.WriteAt(pattern(72, 1<<20), 0)
	noErr(t, fh.Close())
	noErr(t, err)
	// An fsync of another file commits that transaction (the new mtime and
	// ctime of f with it) without writing f's overwritten blocks.
	other := filepath.Join(vol.Dir, "other")
	writeFile(t, other, []byte("x"))
	syncPath(t, other)
	// Past the racy window of the new mtime (a second), so that the run's
	// entry for f is one the cache would use.
	time.Sleep(1100 * time.Millisecond)

	dst := filepath.Join(scratchDir(t), "dst")
	db := filepath.Join(t.TempDir(), "hashes.db")
	cachedRun(t, db, copyengine.Options{Sources: []string{src + "/"}, Dest: dst})

	before := lstatT(t, f)
	noErr(t, vol.Cut(false))
	noErr(t, vol.Remount())
	after := lstatT(t, f)
	got, err := os.ReadFile(f)
	noErr(t, err)
	t.Logf("after the cut: stat %s, data %s", map[bool]string{true: "as before", false: "changed"}[before.Mtim == after.Mtim && before.Ctim == after.Ctim && before.Size == after.Size],
		map[bool]string{true: "the rewrite's", false: "the old"}[string(got) == string(pattern(72, 1<<20))])

	cached := verifyCached(t, db, src, dst)
	plain, err := treeverify.CompareTrees(context.Background(), src, dst, treeverify.TreeOptions{})
	noErr(t, err)
	if cached.OK() != plain.OK() {
		t.Errorf("verify with the cache says identical=%v (%d digests from it), reading the files says identical=%v: a cache entry vouches for bytes the source no longer holds",
			cached.OK(), cached.Known, plain.OK())
	}
}

// syncPath fsyncs the file or directory at p.
func syncPath(t *testing.T, p string) {
	t.Helper()
	fh, err := os.Open(p)
	noErr(t, err)
	err = fh.Sync()
	noErr(t, fh.Close())
	noErr(t, err)
}
