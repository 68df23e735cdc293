package copyengine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/verify"
)

// DefaultScrubMax is the bytes --scrub reads per run when ScrubMax is
// zero: 64 GiB, so that a daily run cycles through a 2 TB DEST in a month.
const DefaultScrubMax = 64 << 30

// ErrRotten is wrapped by the failure of a DEST file --scrub found rotten
// whose source no longer holds the digest recorded for it either: neither
// side is known good, so nothing is copied.
var ErrRotten = errors.New("rotten on the device")

// scrubber is the stage of --scrub. Before the walk, it reads from the
// device (cached pages dropped first) the DEST files the hash cache holds
// whose bytes were last read from the device longer ago than the age
// given (hashcache.Entry.ReadAt, zero for never), oldest first, within
// the run's byte budget: those the cache vouches for, so that a rerun
// would skip them unread. A file that holds the digest its entry
// recorded gets its ReadAt renewed; one that does not, its stat being the
// one the entry holds, is rotten: the decider (lookupCache, checkEntry)
// then reads its source and copies it again only where the source holds
// the recorded digest (settle), and fails it, named, where it does not.
// Every rotten file is in Summary.Rotten and an ActRotten event, with
// what became of it.
type scrubber struct {
	e      *engine
	mu     sync.Mutex
	rotten map[string]*rotFile // by DEST cache key
}

// rotFile is a DEST file found rotten.
type rotFile struct {
	rel     string
	rec     verify.Sum // the digest its entry recorded
	found   string     // how it was found: the start of its sentence, with %s for rec
	outcome string     // what the run did with it; "" while not met by the walk
}

// How a rotten file was found (rotFile.found).
const (
	foundByScrub   = "--scrub read bytes that are not the digest %s recorded for it, its stat unchanged"
	foundEarlier   = "a run before this one read bytes that are not the digest %s recorded for it, its stat unchanged, and it was not repaired since (the hash cache keeps it marked rotten)"
	foundByMove    = "--move read its copy from the device before removing the source, and found bytes that are not the digest %s recorded for it, its stat unchanged"
	notRepairedYet = "not in the source (or left out of the run): not repaired; it stays marked rotten in the hash cache, named by every --scrub and every run that meets it, until it is copied again or removed"
)

// scrubCand is a DEST file the cache holds, as a candidate for a re-read.
type scrubCand struct {
	key      string
	ent      hashcache.Entry
	lastRead int64
}

// pass re-reads the DEST files due for it. It runs before the walk, once
// the destination root is open and locked.
func (sc *scrubber) pass() {
	e := sc.e
	if e.opt.Scrub <= 0 || e.cache == nil || e.dstRoot == nil || e.dstSide.abs == "" {
		return
	}
	cutoff := time.Now().Add(-e.opt.Scrub).UnixNano()
	prefix := e.dstSide.key("") + "/"
	var cands []scrubCand
	e.cache.Range(prefix, func(key string, ent hashcache.Entry) bool {
		if ent.ReadAt < cutoff && ent.Size > 0 {
			cands = append(cands, scrubCand{key: key, ent: ent, lastRead: ent.ReadAt})
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
	budget := e.opt.ScrubMax
	if budget <= 0 {
		budget = DefaultScrubMax
	}
	var spent int64
	buf := e.buf()
	defer e.putBuf(buf)
	for _, c := range cands {
		if e.ctx.Err() != nil {
			return
		}
		if spent > 0 && spent+c.ent.Size > budget {
			break // the next run goes on from here: these are the oldest then
		}
		rel := strings.TrimPrefix(c.key, prefix)
		if n, ok := sc.scrub(c, rel, *buf); ok {
			spent += n
		}
	}
}

// scrub reads one DEST file from the device and reports the bytes read,
// false where the entry no longer vouches for it (the file changed,
// went, or cannot be read: the run decides on it as usual).
func (sc *scrubber) scrub(c scrubCand, rel string, buf []byte) (int64, bool) {
	e := sc.e
	dirRel, name := splitRel(rel)
	d := e.dstRoot
	if dirRel != "" {
		sub, err := e.dstRoot.OpenBeneath(dirRel)
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
	pol := e.decide.dstPolicy(d, st.Dev)
	vol := e.fs.volumeOf(d, st.Dev)
	if !c.ent.Unmarked().Valid(fileState(&st, vol), pol) {
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
	sum, n, err := verify.Stream(f, before.Size, false, buf, e.bw.Sink(e.ctx))
	e.stats.BytesRead.Add(n)
	if err != nil || n != before.Size {
		return n, false
	}
	after, err := f.Stat()
	if err != nil || changed(&before, &after) {
		return n, false
	}
	e.count(func(s *Summary) { s.Scrubbed++; s.BytesScrubbed += n })
	ent := c.ent
	ent.ReadAt, ent.Rotten = started.UnixNano(), false
	if sum != c.ent.Sum {
		// The entry keeps the digest recorded and is marked rotten (never
		// valid, read first by the next scrub), until the file is copied
		// again: a rot this run cannot repair is named by every run that
		// meets it, and `fastcopy verify` with the cache reads the file.
		ent.ReadAt, ent.Rotten = 0, true
		sc.note(c.key, rel, c.ent.Sum, foundByScrub)
	}
	if !e.opt.DryRun {
		e.cache.Put(c.key, ent)
	}
	return n, true
}

// rottenAt reports whether the DEST file of cache key was found rotten,
// with the digest its entry recorded, and notes that the walk met it.
func (sc *scrubber) rottenAt(key string) (verify.Sum, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	r, ok := sc.rotten[key]
	if !ok {
		return verify.Sum{}, false
	}
	if r.outcome == "" {
		// settle decides it when both sides are read; otherwise the
		// source differs in size or mtime, and the file is a changed one.
		r.outcome = "its source changed since (another size or mtime): copied again as a changed file"
	}
	return r.rec, true
}

// note records the DEST file of cache key, rel in DEST, as rotten, found
// as found says, its entry having recorded rec; a file noted already is
// kept as it was.
func (sc *scrubber) note(key, rel string, rec verify.Sum, found string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.rotten == nil {
		sc.rotten = map[string]*rotFile{}
	}
	if _, ok := sc.rotten[key]; !ok {
		sc.rotten[key] = &rotFile{rel: rel, rec: rec, found: found}
	}
}

// leftAlone notes that the DEST file of cache key, if found rotten, was
// left alone by -u or --ignore-existing (keepExisting): not repaired.
func (sc *scrubber) leftAlone(key string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if r, ok := sc.rotten[key]; ok {
		r.outcome = "left alone by -u or --ignore-existing: not copied again; it stays marked rotten in the hash cache, named by every --scrub and every run that meets it, until it is copied again or removed"
	}
}

// found reports whether any DEST file was found rotten.
func (sc *scrubber) found() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.rotten) > 0
}

// settle decides, for a rotten DEST file whose source was read for srcSum
// (checkEntry), whether it is copied again: only from a source that still
// holds the digest recorded for it (false: copy). A source that does not
// is no known-good copy either: the file fails, named, and both sides
// stay as they are (true: done).
func (sc *scrubber) settle(en *entry, rel string, srcSum verify.Sum) bool {
	e := sc.e
	sc.mu.Lock()
	r := sc.rotten[en.cache.dstKey]
	repair := srcSum == en.cache.rec
	if repair {
		r.outcome = "the source holds the digest recorded for it: copied again from the source"
	} else {
		r.outcome = "the source does not hold that digest either: failed, both left as they are (DEST's stays marked rotten in the hash cache)"
	}
	sc.mu.Unlock()
	if repair {
		return false
	}
	if en.group != nil {
		close(en.group.done)
	}
	e.fail(rel, fmt.Errorf("%w in DEST, and its source no longer holds the digest recorded when both were copied (both stats unchanged): neither is known good; check the source and the destination devices, then copy the good one with --force", ErrRotten))
	return true
}

// report names every rotten DEST file, with what the run did with it, in
// the summary and as events. It runs at the end of the run.
func (sc *scrubber) report() {
	sc.mu.Lock()
	var rs []*rotFile
	for _, r := range sc.rotten {
		rs = append(rs, r)
	}
	sc.mu.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].rel < rs[j].rel })
	for _, r := range rs {
		what := r.outcome
		if what == "" {
			what = notRepairedYet
		}
		msg := fmt.Sprintf("%q: rotten on the device: "+r.found+"; %s", r.rel, verify.Hex(r.rec), what)
		sc.rot(r.rel, msg)
	}
}

// rot names a rotten file in the summary and as an event.
func (sc *scrubber) rot(rel, msg string) {
	e := sc.e
	e.count(func(s *Summary) { s.Rotten = append(s.Rotten, msg) })
	e.emit(Event{Action: ActRotten, Path: rel, Err: errors.New(msg)})
}
