package scrub

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// DefaultMax is the bytes Pass reads when Config.Max is zero: 64 GiB, so
// that a daily run cycles through a 2 TB destination in a month.
const DefaultMax = 64 << 30

// ErrRotten is wrapped by the failure of a destination file found rotten
// whose source no longer holds the digest recorded for it either: neither
// side is known good, so nothing is copied.
var ErrRotten = errors.New("rotten on the device")

// Cache is the part of the hash cache Pass uses (*hashcache.Cache).
type Cache interface {
	Range(prefix string, fn func(path string, e hashcache.Entry) bool)
	Put(path string, e hashcache.Entry)
}

// Config is the whole input of Pass.
type Config struct {
	Age time.Duration // re-read files last read from the device longer ago than this
	Max int64         // the bytes to read at most (DefaultMax when zero), but one file always
	// SkipWrite is the dry run's gate (the engine's one): read and note,
	// but change no cache entry; nil: the run writes.
	SkipWrite func() bool

	Cache  Cache
	Root   *fileio.Dir // the destination root, opened (and locked)
	Prefix string      // the cache key of Root followed by "/": the keys Pass reads the files of

	// Policy and Volume are what the cache judges a file on the
	// filesystem dev by (d a directory on it).
	Policy func(d *fileio.Dir, dev uint64) hashcache.Policy
	Volume func(d *fileio.Dir, dev uint64) hashcache.Volume

	Buf  []byte      // the read buffer
	Sink verify.Sink // given each piece read (bandwidth limit, cancellation)
	// Read is told the bytes of each file read, as they are counted
	// while the run goes (nil: not told).
	Read func(n int64)

	Ledger *Ledger // where a rotten file is noted
}

// Result is what a Pass did: the files read whole from the device and
// their bytes.
type Result struct {
	Files int64
	Bytes int64
}

// cand is a destination file the cache holds, as a candidate for a re-read.
type cand struct {
	key      string
	ent      hashcache.Entry
	lastRead int64
}

// Pass re-reads the destination files due for it, until ctx is done or
// the budget is spent; the next pass goes on from where this one stopped,
// those being the oldest then.
func Pass(ctx context.Context, cfg Config) Result {
	var res Result
	if cfg.Age <= 0 {
		return res
	}
	cutoff := time.Now().Add(-cfg.Age).UnixNano()
	var cands []cand
	cfg.Cache.Range(cfg.Prefix, func(key string, ent hashcache.Entry) bool {
		if ent.ReadAt < cutoff && ent.Size > 0 {
			cands = append(cands, cand{key: key, ent: ent, lastRead: ent.ReadAt})
		}
		return true
	})
	// Oldest first: never read from the device (ReadAt zero) before the
	// rest, and among those the digest taken longest ago.
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.lastRead != b.lastRead {
			return a.lastRead < b.lastRead
		}
		if a.ent.HashedAt != b.ent.HashedAt {
			return a.ent.HashedAt < b.ent.HashedAt
		}
		return a.key < b.key
	})
	budget := cfg.Max
	if budget <= 0 {
		budget = DefaultMax
	}
	var spent int64
	for _, c := range cands {
		if ctx.Err() != nil {
			return res
		}
		if spent > 0 && spent+c.ent.Size > budget {
			break // the next run goes on from here: these are the oldest then
		}
		rel := strings.TrimPrefix(c.key, cfg.Prefix)
		if n, ok := cfg.scrub(c, rel); ok {
			spent += n
			res.Files++
			res.Bytes += n
		}
	}
	return res
}

// scrub reads one destination file from the device and reports the bytes
// read, false where the entry no longer vouches for it (the file changed,
// went, or cannot be read: the run decides on it as usual).
func (cfg *Config) scrub(c cand, rel string) (int64, bool) {
	d := cfg.Root
	dirRel, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dirRel, name = rel[:i], rel[i+1:]
	}
	if dirRel != "" {
		sub, err := cfg.Root.OpenBeneath(dirRel)
		if err != nil {
			return 0, false
		}
		defer sub.Close()
		d = sub
	}
	st, err := d.Lstat(name)
	if err != nil || !st.IsRegular() {
		return 0, false
	}
	pol := cfg.Policy(d, st.Dev)
	vol := cfg.Volume(d, st.Dev)
	state := hashcache.FileState{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Volume: vol}
	if !c.ent.Unmarked().Valid(state, pol) {
		return 0, false // not what a rerun would skip unread (nor a rotten file's stat)
	}
	started := time.Now()
	f, err := d.Open(name, false)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil || changed(&st, &before) {
		return 0, false
	}
	_ = f.DropCache() // what was cached before the rot must not answer for the device
	sum, n, err := verify.Stream(f, before.Size, false, cfg.Buf, cfg.Sink)
	if cfg.Read != nil {
		cfg.Read(n)
	}
	if err != nil || n != before.Size {
		return n, false
	}
	after, err := f.Stat()
	if err != nil || changed(&before, &after) {
		return n, false
	}
	ent := c.ent
	ent.ReadAt, ent.Rotten = started.UnixNano(), false
	if sum != c.ent.Sum {
		// The entry keeps the digest recorded and is marked rotten (never
		// valid, read first by the next scrub), until the file is copied
		// again: a rot this run cannot repair is named by every run that
		// meets it, and `fastcopy verify` with the cache reads the file.
		ent.ReadAt, ent.Rotten = 0, true
		cfg.Ledger.Note(c.key, rel, c.ent.Sum, ByScrub)
	}
	if cfg.SkipWrite == nil || !cfg.SkipWrite() {
		cfg.Cache.Put(c.key, ent)
	}
	return n, true
}

// changed reports whether a file moved between two stats of it.
func changed(before, after *fileio.Stat) bool {
	return before.Ino != after.Ino || before.Dev != after.Dev || before.Size != after.Size ||
		before.Mtime != after.Mtime || before.Ctime != after.Ctime
}
