package cacheuse

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

const sec = int64(time.Second)

var (
	fine  = hashcache.Policy{CheckInode: true, CheckCtime: true, MtimeGranularity: time.Nanosecond}
	noCtm = hashcache.Policy{CheckInode: false, CheckCtime: false, MtimeGranularity: 2 * time.Second}
)

func openCache(t *testing.T) *hashcache.Cache {
	t.Helper()
	c, err := hashcache.Open(filepath.Join(t.TempDir(), "h.db"), hashcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stat is a file's stat, its mtime long before now (no entry is racy).
func stat(size int64, ino uint64) *fileio.Stat {
	m := 1704067200 * sec
	return &fileio.Stat{Size: size, Mtime: m, Ctime: m, Ino: ino, Dev: 7}
}

// entry is the entry of a file in the state st with digest sum.
func entry(st *fileio.Stat, sum verify.Sum) hashcache.Entry {
	return hashcache.Entry{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Sum: sum, HashedAt: st.Mtime + 86400*sec, Volume: 42}
}

// get flushes c's queued entries and gets key's.
func get(t *testing.T, c *hashcache.Cache, key string) (hashcache.Entry, bool) {
	t.Helper()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	return c.Get(key)
}

func cfgOf(c *hashcache.Cache) Config {
	return Config{Cache: c, Volume: func(uint64) hashcache.Volume { return 42 }}
}

// TestLookup checks what a directory's look-ups vouch for: both entries
// valid, an entry of another stat, --move's entry that vouches for no
// bytes, an earlier run's rotten mark, and the source's own entry where
// DEST keeps no change time.
func TestLookup(t *testing.T) {
	c := openCache(t)
	a, b := verify.Bytes([]byte("a")), verify.Bytes([]byte("b"))
	src, dst := stat(10, 1), stat(10, 2)
	c.Put("/s/ok", entry(src, a))
	c.Put("/d/ok", entry(dst, a))
	c.Put("/s/old", entry(stat(11, 1), a))
	c.Put("/d/old", entry(dst, b))
	rot := entry(dst, b)
	rot.Rotten = true
	c.Put("/d/rot", rot)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	q := Query{Src: fine, Dst: fine, Files: []File{
		{SrcKey: "/s/ok", DstKey: "/d/ok", Src: src, Dst: dst},
		{SrcKey: "/s/old", DstKey: "/d/old", Src: src, Dst: dst},
		{SrcKey: "/s/none", DstKey: "/d/rot", Src: src, Dst: dst},
	}}
	ans := Lookup(cfgOf(c), q)
	if x := ans[0]; !x.Asked || !x.SrcOK || !x.DstOK || x.Src != a || x.Dst != a || x.SrcKey != "/s/ok" || x.DstKey != "/d/ok" {
		t.Errorf("both valid: %+v", x)
	}
	if x := ans[1]; !x.Asked || x.SrcOK || !x.DstOK || x.Dst != b {
		t.Errorf("source moved: %+v", x)
	}
	if x := ans[2]; !x.Asked || x.SrcOK || x.DstOK || !x.Earlier || x.Rec != b {
		t.Errorf("earlier rotten: %+v", x)
	}

	cfg := cfgOf(c)
	cfg.Move = true
	if x := Lookup(cfg, q)[0]; x.DstOK || !x.MoveRec || x.Dst != a || !x.SrcOK {
		t.Errorf("--move: %+v", x)
	}

	q.Dst = noCtm
	ans = Lookup(cfgOf(c), q)
	if x := ans[0]; x.Asked || x.Moved || x.SrcOK || x.DstOK {
		t.Errorf("DEST without ctime, source as recorded: %+v", x)
	}
	if x := ans[1]; x.Asked || !x.Moved {
		t.Errorf("DEST without ctime, source changed: %+v", x)
	}
	q.Src = noCtm
	for i, x := range Lookup(cfgOf(c), q) {
		if x != (Answer{}) {
			t.Errorf("source without ctime, file %d: %+v", i, x)
		}
	}
	if x := Lookup(Config{}, q); len(x) != 3 || x[0] != (Answer{}) {
		t.Errorf("no cache: %+v", x)
	}
}

// TestStatMoved checks that only an entry of the file's volume tells.
func TestStatMoved(t *testing.T) {
	st := stat(10, 1)
	ent := entry(st, verify.Sum{})
	cur := hashcache.StateOf(st, 42)
	if StatMoved(ent, cur, fine) {
		t.Error("the recorded stat moved")
	}
	cur.Mtime++
	if !StatMoved(ent, cur, fine) {
		t.Error("another mtime did not move")
	}
	if StatMoved(ent, hashcache.StateOf(stat(11, 1), 0), fine) {
		t.Error("an unknown volume told")
	}
	cur = hashcache.StateOf(stat(10, 9), 42)
	if StatMoved(ent, cur, noCtm) || !StatMoved(ent, cur, fine) {
		t.Error("the inode counts only where the policy checks it")
	}
}

// TestCompare checks the rule by which the stats and the cache settle a
// destination file as large as its source.
func TestCompare(t *testing.T) {
	a, b := verify.Bytes([]byte("a")), verify.Bytes([]byte("b"))
	src, newer := stat(10, 1), stat(10, 2)
	newer.Mtime += sec
	both := &Answer{Asked: true, SrcOK: true, DstOK: true, Src: a, Dst: a}
	for _, c := range []struct {
		name string
		p    Pair
		want Verdict
	}{
		{"rsync rule, same mtime", Pair{Src: src, Dst: src, Gran: 1}, Verdict{Kind: Holds}},
		{"rsync rule, another mtime", Pair{Src: src, Dst: newer, Gran: 1}, Verdict{Kind: Differs}},
		{"checksum", Pair{Src: src, Dst: src, Gran: 1, Checksum: true}, Verdict{Kind: Unsure}},
		{"a record lists digests", Pair{Src: src, Dst: src, Gran: 1, Lists: true}, Verdict{Kind: Unsure}},
		{"another size", Pair{Src: src, Dst: stat(11, 2), Gran: 1}, Verdict{Kind: Differs}},
		{"empty", Pair{Src: stat(0, 1), Dst: func() *fileio.Stat { s := stat(0, 2); s.Mtime++; return s }(), Gran: 1, Contested: true}, Verdict{Kind: Holds, FixTimes: true}},
		{"contested", Pair{Src: src, Dst: src, Gran: 1, Answer: both, Contested: true}, Verdict{Kind: Unsure}},
		{"source moved", Pair{Src: src, Dst: src, Gran: 1, Moved: true}, Verdict{Kind: Unsure}},
		{"both vouched, times differ", Pair{Src: src, Dst: newer, Gran: 1, Answer: both}, Verdict{Kind: Holds, FixTimes: true, TimesSum: a, Hits: 2}},
		{"both vouched, digests differ", Pair{Src: src, Dst: src, Gran: 1, Answer: &Answer{Asked: true, SrcOK: true, DstOK: true, Src: a, Dst: b}}, Verdict{Kind: Differs}},
		{"nothing vouches, another mtime", Pair{Src: src, Dst: newer, Gran: 1, Answer: &Answer{Asked: true, SrcOK: true, Src: a}}, Verdict{Kind: Differs}},
		{"nothing vouches, same mtime", Pair{Src: src, Dst: src, Gran: 1, Answer: &Answer{Asked: true}}, Verdict{Kind: Unsure}},
		{"coarse resolution", Pair{Src: src, Dst: newer, Gran: 2 * sec, Answer: &Answer{Asked: true}}, Verdict{Kind: Unsure}},
	} {
		if got := Compare(c.p); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestRecorderDurability checks that a destination entry waits for the
// final flush (StoreFlushed), a source's for its filesystem's flush
// through a directory noted (StoreHeld, dropped without one), and that a
// dry run, an empty file or an unknown volume store nothing.
func TestRecorderDurability(t *testing.T) {
	c := openCache(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	sum := verify.Bytes([]byte("0123456789"))
	r := NewRecorder(cfgOf(c))
	defer r.Close()

	r.DestLater("/d/later", &st, sum, time.Now(), 5)
	if _, ok := get(t, c, "/d/later"); ok {
		t.Error("a destination entry stored before the final flush")
	}
	r.Dest("/d/now", &st, sum, time.Now(), 0)
	if e, ok := get(t, c, "/d/now"); !ok || e.Sum != sum || e.Volume != 42 {
		t.Errorf("flushed destination entry: %+v, %v", e, ok)
	}
	r.StoreFlushed()
	if e, ok := get(t, c, "/d/later"); !ok || e.ReadAt != 5 {
		t.Errorf("destination entry after the final flush: %+v, %v", e, ok)
	}

	r.Source("/s/unnoted", &st, sum, nil, time.Now())
	r.NoteSource(st.Dev+1, d) // another filesystem
	r.StoreHeld()
	if _, ok := get(t, c, "/s/unnoted"); ok {
		t.Error("a source entry stored without a flush of its filesystem")
	}
	r.NoteSource(st.Dev, d)
	r.Source(f, &st, sum, map[string]string{"md5": "x"}, time.Now())
	if _, ok := get(t, c, f); ok {
		t.Error("a source entry stored before its filesystem's flush")
	}
	r.StoreHeld()
	if e, ok := get(t, c, f); !ok || e.Sum != sum || e.Digests == "" {
		t.Errorf("source entry after the flush: %+v, %v", e, ok)
	}

	dry := cfgOf(c)
	dry.SkipWrite = func() bool { return true }
	NewRecorder(dry).Dest("/d/dry", &st, sum, time.Now(), 0)
	empty := st
	empty.Size = 0
	r.Dest("/d/empty", &empty, sum, time.Now(), 0)
	unknown := cfgOf(c)
	unknown.Volume = func(uint64) hashcache.Volume { return 0 }
	NewRecorder(unknown).Dest("/d/unknown", &st, sum, time.Now(), 0)
	for _, k := range []string{"/d/dry", "/d/empty", "/d/unknown"} {
		if _, ok := get(t, c, k); ok {
			t.Errorf("%s stored", k)
		}
	}
}

// TestCheckMoveRot checks that under --move a copy that does not give
// the digest its entry recorded, which the source still gives, is found
// rotten, the source read again where its digest was the cache's.
func TestCheckMoveRot(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("rotten"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	good := verify.Bytes([]byte("sound!"))
	reads := 0
	chk := Check{
		Answer:     &Answer{Asked: true, SrcOK: true, Src: good, Dst: good, MoveRec: true},
		Device:     true,
		SrcSize:    6,
		ReadSource: func() (verify.Sum, error) { reads++; return good, nil },
		DstStat:    &st, Dir: d, Name: "f", Buf: make([]byte, 1<<16),
	}
	k, err := chk.Run()
	if err != nil {
		t.Fatal(err)
	}
	if !k.RottenByMove || reads != 1 || k.Hits != 0 || k.Hashed != 12 || k.Read != 6 || k.Found == nil || k.FoundRead == 0 || k.Dst == good {
		t.Errorf("rotten copy under --move: %+v, source reads %d", k, reads)
	}

	// A sound copy under --move: read from the device, it gives the
	// digest its entry recorded, and is not rotten.
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("sound!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err = d.Lstat("f"); err != nil {
		t.Fatal(err)
	}
	chk.DstStat = &st
	chk.Answer = &Answer{Asked: true, SrcOK: true, Src: good, Dst: good, MoveRec: true}
	if k, err := chk.Run(); err != nil || k.RottenByMove || k.Dst != good {
		t.Errorf("sound copy under --move: %+v, %v", k, err)
	}

	chk.Answer = &Answer{Asked: true, SrcOK: true, Src: good, DstOK: true, Dst: good}
	chk.Device, reads = false, 0
	if k, err := chk.Run(); err != nil || k.RottenByMove || reads != 0 || k.Hits != 2 || k.Found != nil || k.Vouched != &st {
		t.Errorf("both vouched: %+v, %v, source reads %d", k, err, reads)
	}
}
