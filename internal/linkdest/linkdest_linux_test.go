//go:build linux

package linkdest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// TestPath checks where a relative --link-dest lies: resolved from DEST
// by the kernel where DEST exists, cut as text only where it does not.
func TestPath(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	real := filepath.Join(top, "real")
	if err := os.MkdirAll(filepath.Join(real, "day2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "day2"), filepath.Join(top, "latest")); err != nil {
		t.Fatal(err)
	}
	realTop, _ := fileio.Resolve(top)
	for _, c := range []struct{ dst, arg, want string }{
		{"/anywhere", "/abs/day1", "/abs/day1"},
		// Through a symlink: the parent of its target, as the kernel has it.
		{filepath.Join(top, "latest"), "../day1", filepath.Join(realTop, "real", "day2") + "/../day1"},
		// A DEST not made yet: its ".." is its parent as text.
		{filepath.Join(top, "new", "day3"), "../day1", filepath.Join(top, "new", "day1")},
		{filepath.Join(top, "new", "day3"), "./day1", filepath.Join(top, "new", "day3", "day1")},
	} {
		if got := Path(c.dst, c.arg); got != c.want {
			t.Errorf("Path(%q, %q) = %q, want %q", c.dst, c.arg, got, c.want)
		}
	}
}

// fakeCache is a Cache of one entry that records what is put.
type fakeCache struct {
	key  string
	ent  hashcache.Entry
	puts []hashcache.Entry
}

func (c *fakeCache) Lookup(paths []string) []hashcache.LookupResult {
	if paths[0] == c.key {
		return []hashcache.LookupResult{{Entry: c.ent, Found: true}}
	}
	return []hashcache.LookupResult{{}}
}

func (c *fakeCache) Put(path string, e hashcache.Entry) {
	if path == c.key {
		c.puts = append(c.puts, e)
	}
}

// setup makes DEST and a --link-dest directory prev holding a/f, and
// opens the set with cache.
func setup(t *testing.T, cache Cache, dryRun bool) (*Set, string, fileio.Stat) {
	t.Helper()
	top := t.TempDir()
	prev := filepath.Join(top, "prev")
	if err := os.MkdirAll(filepath.Join(prev, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(top, "dest"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prev, "a", "f"), []byte("the counterpart"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(d *fileio.Dir, name string, buf []byte) (verify.Sum, fileio.Stat, error) {
		f, err := d.Open(name, false)
		if err != nil {
			return verify.Sum{}, fileio.Stat{}, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return verify.Sum{}, fileio.Stat{}, err
		}
		sum, _, err := verify.Stream(f, st.Size, false, buf, nil)
		return sum, st, err
	}
	s, notes := Open(Config{
		Dirs:       []string{"../prev", "../missing"},
		DstRoot:    filepath.Join(top, "dest"),
		SkipWrite:  func() bool { return dryRun },
		Cache:      cache,
		ReadDevice: read,
		Volume:     func(*fileio.Dir, uint64) hashcache.Volume { return 7 },
	})
	t.Cleanup(s.Close)
	if s.Len() != 1 || len(notes) != 1 || !strings.Contains(notes[0], `"../missing"`) {
		t.Fatalf("Open: %d directories, notes %q; want prev opened and ../missing noted", s.Len(), notes)
	}
	d, err := fileio.OpenDir(filepath.Join(prev, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fst, err := d.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	return s, filepath.Join(top, "dest"), fst
}

func want(st fileio.Stat) Want {
	return Want{Size: st.Size, Mode: st.Mode & 0o7777, Uid: st.Uid, Gid: st.Gid, Mtime: st.Mtime}
}

// TestCandidate checks that a counterpart is one only with the copy's
// size, mode, owner and mtime, and not the destination entry itself.
func TestCandidate(t *testing.T) {
	t.Parallel()
	s, _, st := setup(t, nil, false)
	if c, ok := s.Candidate(0, "a", "f", want(st)); !ok || c.Rel != "a/f" || c.St.Ino != st.Ino {
		t.Fatalf("Candidate = %+v, %v; want a/f", c, ok)
	} else {
		c.Close()
	}
	for name, w := range map[string]func(*Want){
		"another size":  func(w *Want) { w.Size++ },
		"another mode":  func(w *Want) { w.Mode ^= 0o020 },
		"another owner": func(w *Want) { w.Uid++ },
		"another mtime": func(w *Want) { w.Mtime++ },
		"itself":        func(w *Want) { w.Self = &st },
	} {
		x := want(st)
		w(&x)
		if c, ok := s.Candidate(0, "a", "f", x); ok {
			c.Close()
			t.Errorf("%s: a counterpart", name)
		}
	}
	if _, ok := s.Candidate(0, "a", "none", want(st)); ok {
		t.Error("a missing file is a counterpart")
	}
}

// TestDigestRotten checks that a counterpart whose valid entry records
// another digest than its bytes is named rotten, not linked to, and its
// entry marked (but in a dry run).
func TestDigestRotten(t *testing.T) {
	t.Parallel()
	for _, dry := range []bool{false, true} {
		cache := &fakeCache{}
		s, _, st := setup(t, cache, dry)
		if !s.dirs[0].policy.Vouches() {
			t.Skipf("skipped: the cache vouches for no file on %s's filesystem", s.dirs[0].abs)
		}
		cache.key = s.dirs[0].key("a/f")
		cache.ent = hashcache.Entry{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Volume: 7,
			Sum: verify.Bytes([]byte("what it held once")), HashedAt: st.Mtime + int64(10*time.Second), ReadAt: 1}
		c, ok := s.Candidate(0, "a", "f", want(st))
		if !ok {
			t.Fatal("no counterpart")
		}
		buf := make([]byte, verify.BufSize)
		r, ok := s.Digest(c, "a/f", buf)
		c.Close()
		if ok || r.Rotten == "" || !strings.Contains(r.Rotten, verify.Hex(cache.ent.Sum)) || r.Hashed != st.Size {
			t.Fatalf("dry %v: Digest = %+v, %v; want it named rotten, its bytes counted, not linked to", dry, r, ok)
		}
		if dry && len(cache.puts) != 0 {
			t.Errorf("a dry run marked the entry: %+v", cache.puts)
		}
		if !dry && (len(cache.puts) != 1 || !cache.puts[0].Rotten || cache.puts[0].ReadAt != 0 || cache.puts[0].Sum != cache.ent.Sum) {
			t.Errorf("entry put %+v; want it marked rotten, its digest kept", cache.puts)
		}
		// The entry that records its bytes: linked to.
		cache.ent.Sum, cache.puts = verify.Bytes([]byte("the counterpart")), nil
		c, _ = s.Candidate(0, "a", "f", want(st))
		r, ok = s.Digest(c, "a/f", buf)
		c.Close()
		if !ok || r.Rotten != "" || r.Sum != cache.ent.Sum || len(cache.puts) != 0 {
			t.Errorf("dry %v: a sound counterpart: %+v, %v, puts %d", dry, r, ok, len(cache.puts))
		}
	}
}

// TestLink checks the link: made under the temporary name, then the
// final name, leading to the inode established; and refused where the
// counterpart changed since.
func TestLink(t *testing.T) {
	t.Parallel()
	s, dest, st := setup(t, nil, false)
	dd, err := fileio.OpenDir(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	c, ok := s.Candidate(0, "a", "f", want(st))
	if !ok {
		t.Fatal("no counterpart")
	}
	defer c.Close()
	var before, after int
	p := Place{Dst: dd, Tmp: ".f.tmp", Name: "f", Before: func() { before++ }, After: func(err error) {
		after++
		if err != nil {
			t.Errorf("After: %v", err)
		}
	}}
	moved := st
	moved.Mtime++
	if r := s.Link(c, moved, p, "f"); r.St != nil || r.Err != nil || r.Fallback != nil || before != 0 {
		t.Fatalf("Link of a counterpart that changed since: %+v (Before called %d times)", r, before)
	}
	r := s.Link(c, st, p, "f")
	if r.St == nil || r.Err != nil || r.St.Ino != st.Ino || before != 1 || after != 1 {
		t.Fatalf("Link = %+v; Before %d, After %d", r, before, after)
	}
	if got, err := dd.Lstat("f"); err != nil || got.Ino != st.Ino {
		t.Errorf("f: %+v, %v; want inode %d", got, err, st.Ino)
	}
	if _, err := dd.Lstat(".f.tmp"); !fileio.IsNotExist(err) {
		t.Errorf("the temporary is left: %v", err)
	}
}

// TestLinkChecked checks that a link to another inode than the one
// verified is removed and refused.
func TestLinkChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := LinkChecked(d, "t", d, "a", st.Dev, st.Ino+1); !errors.Is(err, ErrReplaced) {
		t.Fatalf("a link to another inode: %v, want ErrReplaced", err)
	}
	if _, err := d.Lstat("t"); !fileio.IsNotExist(err) {
		t.Fatalf("the link to another inode is left: %v", err)
	}
	if err := LinkChecked(d, "t", d, "a", st.Dev, st.Ino); err != nil {
		t.Fatalf("the link to the inode verified: %v", err)
	}
}
