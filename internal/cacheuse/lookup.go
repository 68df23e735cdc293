package cacheuse

import (
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Config is a run's use of the hash cache: its whole input, shared by
// Lookup and the Recorder.
type Config struct {
	Cache *hashcache.Cache // nil: no cache, nothing vouched for or stored
	// Volume is the identity of the volume of the filesystem dev, as the
	// run knows it (zero: none; an entry there is never trusted nor
	// stored).
	Volume func(dev uint64) hashcache.Volume
	// Move: --move, under which a destination entry never vouches for a
	// copy's bytes (Answer.MoveRec).
	Move bool
	// SkipWrite is the dry run's gate (the engine's one): nothing is
	// stored; nil: the run writes.
	SkipWrite func() bool
}

func (cfg *Config) skipWrite() bool { return cfg.SkipWrite != nil && cfg.SkipWrite() }

// Query is one directory's look-ups: its regular files whose destination
// is a regular file of the same size, and the validity policies of the
// source's and the destination directory's filesystems.
type Query struct {
	Src, Dst hashcache.Policy
	Files    []File
}

// File is one file of a Query: the cache keys of both sides and their
// stats now.
type File struct {
	SrcKey, DstKey string
	Src, Dst       *fileio.Stat
}

// Answer is what the cache vouches for of one File. Lookup changes
// nothing: the caller decides with it, and keeps it with the file.
type Answer struct {
	SrcKey, DstKey string // the File's keys
	// Asked: the cache can vouch for both sides' content (both
	// filesystems keep a change time: hashcache.Policy.Vouches), and
	// both entries were looked up. Otherwise only Moved may be set.
	Asked bool
	// SrcOK: the source's entry is valid for the file as it is now, its
	// digest Src; SrcEntry is that entry (its digests in other formats),
	// which the caller may find lacking and then clear SrcOK.
	SrcOK    bool
	Src      verify.Sum
	SrcEntry hashcache.Entry
	// DstOK: the destination's entry is valid for the file as it is now,
	// its digest Dst, its bytes last read from the device at ReadAt.
	DstOK  bool
	Dst    verify.Sum
	ReadAt int64
	// MoveRec: under --move the destination's entry was valid (its
	// digest in Dst) but vouches for no bytes (DstOK false): the copy is
	// read from the device all the same (Check), and is rotten where it
	// does not give Dst.
	MoveRec bool
	// Earlier: the destination's entry is marked rotten by an earlier
	// run that could not repair it, and is valid otherwise; Rec is the
	// digest it recorded.
	Earlier bool
	// Rotten: the caller found the destination file not to hold Rec, the
	// digest its entry recorded, its stat unchanged (--scrub's ledger,
	// or a Check under --move); neither side's entry then decides.
	Rotten bool
	Rec    verify.Sum
	// Moved: DEST cannot vouch (no change time there) and the source's
	// entry records another stat than the source has now: the source
	// changed since it was last read, which DEST's coarse times cannot
	// show.
	Moved bool
}

// Lookup answers, for each file of q in order, what the cache vouches
// for, in one read transaction per side.
//
// Where either side has no change time to rely on, the cache cannot
// vouch for a file's content (see hashcache.Policy.Vouches): the caller
// then decides as without a cache. Where only DEST has none (exFAT, FAT,
// with coarse mtimes), size and mtime there can match a source rewritten
// since its copy: the source's own entry, recorded when it was last read
// (by the copy, or a check since), tells whether it was (Answer.Moved).
func Lookup(cfg Config, q Query) []Answer {
	ans := make([]Answer, len(q.Files))
	if cfg.Cache == nil || len(q.Files) == 0 {
		return ans
	}
	l := lookup{cfg: &cfg, q: &q, vols: map[uint64]hashcache.Volume{}}
	if !q.Src.Vouches() {
		return ans
	}
	if !q.Dst.Vouches() {
		l.moved(ans)
		return ans
	}
	srcKeys, dstKeys := make([]string, len(q.Files)), make([]string, len(q.Files))
	for i, f := range q.Files {
		srcKeys[i], dstKeys[i] = f.SrcKey, f.DstKey
	}
	srcRes := cfg.Cache.Lookup(srcKeys)
	dstRes := cfg.Cache.Lookup(dstKeys)
	for i := range q.Files {
		ans[i] = l.take(&q.Files[i], srcRes[i], dstRes[i])
	}
	return ans
}

// lookup is one Query's judging of the entries found.
type lookup struct {
	cfg  *Config
	q    *Query
	vols map[uint64]hashcache.Volume
}

// volume is the known volume of the filesystem dev, asked once.
func (l *lookup) volume(dev uint64) hashcache.Volume {
	v, ok := l.vols[dev]
	if !ok {
		v = l.cfg.Volume(dev)
		l.vols[dev] = v
	}
	return v
}

// moved sets Answer.Moved from the sources' own entries.
func (l *lookup) moved(ans []Answer) {
	keys := make([]string, len(l.q.Files))
	for i, f := range l.q.Files {
		keys[i] = f.SrcKey
	}
	for i, r := range l.cfg.Cache.Lookup(keys) {
		f := &l.q.Files[i]
		ans[i].Moved = r.Found && StatMoved(r.Entry, hashcache.StateOf(f.Src, l.volume(f.Src.Dev)), l.q.Src)
	}
}

// take judges the entries of f's source (sr) and destination (dr), valid
// by the policies of their filesystems.
func (l *lookup) take(f *File, sr, dr hashcache.LookupResult) Answer {
	a := Answer{SrcKey: f.SrcKey, DstKey: f.DstKey, Asked: true}
	if sr.Found && sr.Entry.Valid(hashcache.StateOf(f.Src, l.volume(f.Src.Dev)), l.q.Src) {
		a.SrcOK, a.Src, a.SrcEntry = true, sr.Entry.Sum, sr.Entry
	}
	dst := hashcache.StateOf(f.Dst, l.volume(f.Dst.Dev))
	if dr.Found && dr.Entry.Valid(dst, l.q.Dst) {
		a.Dst, a.DstOK, a.ReadAt = dr.Entry.Sum, true, dr.Entry.ReadAt
		if l.cfg.Move {
			// A cache entry vouches for a stat, never for bytes: a
			// source is removed only once its copy was read from the
			// device in this run, and a copy that does not give the
			// digest recorded for it is rotten.
			a.DstOK, a.MoveRec = false, true
		}
	} else if dr.Found && dr.Entry.Rotten && dr.Entry.Unmarked().Valid(dst, l.q.Dst) {
		// An earlier run found it rotten and could not repair it.
		a.Earlier, a.Rec = true, dr.Entry.Sum
	}
	return a
}

// StatMoved reports whether cur, a file's stat now, is not the one its
// cache entry ent was recorded with, as far as policy p trusts the fields:
// the exact size and mtime, the change time and the inode where p checks
// them. An entry of another volume (or of an unknown one) tells nothing.
func StatMoved(ent hashcache.Entry, cur hashcache.FileState, p hashcache.Policy) bool {
	if cur.Volume == 0 || ent.Volume != cur.Volume {
		return false
	}
	return ent.Size != cur.Size || ent.Mtime != cur.Mtime ||
		(p.CheckCtime && ent.Ctime != cur.Ctime) || (p.CheckInode && ent.Ino != cur.Ino)
}
