package copyengine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/source"
	"github.com/fastcopy/fastcopy/verify"
)

// memDest is a destination of another kind than a local directory: it
// keeps what it is given in memory. It is built only on the source side
// the destinations share (walk, filters, reads through the share, the
// hash cache's source half), as a remote destination is, and proves that
// seam: nothing of the local pipeline is in its way.
type memDest struct {
	files map[string][]byte
	sums  map[string]verify.Sum
	dirs  map[string]bool
	links map[string]string
}

func newMemDest() *memDest {
	return &memDest{files: map[string][]byte{}, sums: map[string]verify.Sum{}, dirs: map[string]bool{}, links: map[string]string{}}
}

func (m *memDest) where() string { return "mem:" }

func (m *memDest) run(ctx context.Context, src *source.Side) (Summary, error) {
	var sum Summary
	buf := make([]byte, verify.BufSize)
	err := src.Walk(ctx, func(f *source.File) error {
		switch {
		case f.Err != nil:
			sum.Failed++
			sum.Failures = append(sum.Failures, newFailure(f.Rel, f.Err))
		case f.Stat.IsDir():
			if !m.dirs[f.Rel] {
				m.dirs[f.Rel] = true
				sum.Dirs++
			}
		case f.Stat.IsSymlink():
			m.links[f.Rel] = f.Target
			sum.Symlinks++
		case f.Stat.IsRegular():
			m.file(src, f, buf, &sum)
		}
		return nil
	})
	sum.Elapsed = time.Since(src.Start)
	if err == nil && sum.Failed > 0 {
		err = ErrSomeFailed
	}
	return sum, err
}

// file takes f: left alone when the cache vouches that the copy held
// already is f's content, else read through the share, checked against
// the digest taken as it was read and recorded.
func (m *memDest) file(src *source.Side, f *source.File, buf []byte, sum *Summary) {
	if held, ok := m.files[f.Rel]; ok && f.Stat.Size == 0 && len(held) == 0 {
		sum.Skipped++ // nothing to vouch for
		return
	}
	if d, ok := src.Cached(f); ok {
		sum.CacheHits++
		if held, ok := m.sums[f.Rel]; ok && held == d && int64(len(m.files[f.Rel])) == f.Stat.Size {
			src.Pass(f)
			sum.Skipped++
			return
		}
	}
	data := make([]byte, f.Stat.Size)
	started := time.Now()
	d, n, err := src.Read(f, func(p []byte, off int64) error { copy(data[off:], p); return nil }, buf)
	sum.BytesRead += n
	if err == nil && verify.Bytes(data) != d {
		err = &MismatchError{Path: f.Rel, Want: verify.Hex(d), Got: verify.Hex(verify.Bytes(data))}
	}
	if err != nil {
		sum.Failed++
		sum.Failures = append(sum.Failures, newFailure(f.Rel, err))
		return
	}
	src.Remember(f, d, started)
	m.files[f.Rel], m.sums[f.Rel] = data, d
	sum.Copied++
	sum.Bytes += f.Stat.Size
}

// seamTree writes a source tree: files across several read chunks, an
// empty file, one the filters leave out, a subdirectory and a symlink; it
// returns the files a copy holds and their total size.
func seamTree(t *testing.T, src string) (map[string][]byte, int64) {
	t.Helper()
	files := map[string][]byte{
		"a.bin":       bytes.Repeat([]byte("a0123456789"), 3<<20/11),
		"sub/b.txt":   []byte("bee"),
		"sub/c.bin":   bytes.Repeat([]byte{7, 1, 9}, 700_000),
		"sub/d/e.txt": []byte("deep"),
		"empty":       nil,
	}
	var total int64
	for rel, data := range files {
		writeSeamFile(t, filepath.Join(src, rel), data)
		total += int64(len(data))
	}
	writeSeamFile(t, filepath.Join(src, "sub", "scratch.tmp"), []byte("left out"))
	if err := os.Symlink("b.txt", filepath.Join(src, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour) // the cache trusts entries of files this old
	filepath.Walk(src, func(p string, _ os.FileInfo, _ error) error { os.Chtimes(p, old, old); return nil })
	return files, total
}

func writeSeamFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// seamPlan plans opts as RunAll does and returns the local destinations
// and the source side.
func seamPlan(t *testing.T, opts []Options) ([]destination, source.Side) {
	t.Helper()
	plans, err := planAll(opts)
	if err != nil {
		t.Fatal(err)
	}
	var dests []destination
	for i := range opts {
		dests = append(dests, &localDest{opt: opts[i], plan: plans[i]})
	}
	return dests, newSourceSide(&opts[0], plans[0], time.Now())
}

func seamHolds(t *testing.T, what string, got map[string][]byte, want map[string][]byte) {
	t.Helper()
	var names []string
	for rel := range got {
		names = append(names, rel)
	}
	sort.Strings(names)
	if len(got) != len(want) {
		t.Errorf("%s holds %v, want the %d files of the source the filters keep", what, names, len(want))
	}
	for rel, data := range want {
		if g, ok := got[rel]; !ok || !bytes.Equal(g, data) {
			t.Errorf("%s: %s holds %d bytes (present %v), want the source's %d", what, rel, len(g), ok, len(data))
		}
	}
}

// TestSeamDestinationBesideLocal runs a destination of another kind beside
// a local one: both get every file the filters keep, the excluded file
// neither, and each source byte is read from the source once, by one of
// the two, and handed to the other (or dropped by the share and read
// again, which its count says).
func TestSeamDestinationBesideLocal(t *testing.T) {
	tmp := t.TempDir()
	src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	files, total := seamTree(t, src)
	dests, side := seamPlan(t, []Options{{Sources: []string{src}, Dest: dst, Excludes: []string{"*.tmp"}}})
	mem := newMemDest()
	share := source.NewShare(2, 64<<20)
	res := runDestinations(context.Background(), append(dests, mem), side, share)
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("destination %d: %v (failures %v)", i, r.Err, r.Summary.Failures)
		}
	}
	local := map[string][]byte{}
	filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dst, p)
			data, _ := os.ReadFile(p)
			local[filepath.ToSlash(rel)] = data
		}
		return nil
	})
	seamHolds(t, "the local destination", local, files)
	seamHolds(t, "the other destination", mem.files, files)
	if st, err := os.Lstat(filepath.Join(src, "sub", "link")); err == nil && st.Mode()&os.ModeSymlink != 0 { // Wine reports a symlink made and makes none
		if got := mem.links["sub/link"]; got != "b.txt" {
			t.Errorf("the other destination's sub/link leads to %q, want b.txt", got)
		}
	}
	if !mem.dirs["sub/d"] {
		t.Errorf("the other destination has no directory sub/d: %v", mem.dirs)
	}
	shared := res[0].Summary.BytesShared + res[1].Summary.BytesShared
	if dropped := share.Dropped(); shared+dropped != total {
		t.Errorf("bytes handed from one destination's read to the other: %d (local took %d, the other %d), dropped %d; want the %d source bytes read once",
			shared, res[0].Summary.BytesShared, res[1].Summary.BytesShared, dropped, total)
	}
	if res[1].Summary.Copied != 5 || res[0].Summary.Copied != 5 {
		t.Errorf("copied: local %d, the other %d; want the 5 files each", res[0].Summary.Copied, res[1].Summary.Copied)
	}
}

// TestSeamDestinationCacheSourceHalf: a destination of another kind asks
// the hash cache's source half: a rerun over unchanged sources reads
// nothing, and a file rewritten in place with its size and mtime kept is
// read again (its ctime moved), and only it.
func TestSeamDestinationCacheSourceHalf(t *testing.T) {
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	_, total := seamTree(t, src)
	db := filepath.Join(tmp, "cache.db")
	mem := newMemDest()
	run := func(n int) Summary {
		t.Helper()
		hc, err := hashcache.Open(db, hashcache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, side := seamPlan(t, []Options{{Sources: []string{src}, Dest: filepath.Join(tmp, "dst"), Excludes: []string{"*.tmp"}, Cache: hc}})
		res := runDestinations(context.Background(), []destination{mem}, side, nil)
		if err := hc.Close(); err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil {
			t.Fatalf("run %d: %v", n, res[0].Err)
		}
		return res[0].Summary
	}
	if s := run(1); s.BytesRead != total || s.Copied != 5 {
		t.Fatalf("first run read %d bytes and copied %d, want %d and 5", s.BytesRead, s.Copied, total)
	}
	if s := run(2); s.BytesRead != 0 || s.Skipped != 5 || s.CacheHits != 4 {
		t.Errorf("rerun over unchanged sources: read %d bytes, skipped %d, cache hits %d; want 0, 5, 4", s.BytesRead, s.Skipped, s.CacheHits)
	}
	p := filepath.Join(src, "sub", "b.txt")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a ctime of another tick
	if err := os.WriteFile(p, []byte("BEE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	s := run(3)
	if s.BytesRead != 3 || s.Copied != 1 || s.Skipped != 4 {
		t.Errorf("after sub/b.txt was rewritten, times kept: read %d bytes, copied %d, skipped %d; want 3, 1, 4", s.BytesRead, s.Copied, s.Skipped)
	}
	if got := string(mem.files["sub/b.txt"]); got != "BEE" {
		t.Errorf("sub/b.txt holds %q after the rerun, want the rewritten %q", got, "BEE")
	}
}
