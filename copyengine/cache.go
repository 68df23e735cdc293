package copyengine

import (
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// cacheRecorder writes to the hash cache what the run learned: digests of
// sources as they are read, and of destination files once verified. A
// source's entry waits for its filesystem's flush (held), a destination's
// for the run's final flush (later). The decider's lookups are in this file
// too.
type cacheRecorder struct {
	e     *engine
	later []laterEntry // destination entries stored after the final flush (under e.mu)
	held  []heldEntry  // source entries waiting for their filesystem's flush (under e.mu)
	read  filesystems  // a directory on each source filesystem an entry may come from
}

// cacheSide is one side (a source root, or the destination) as the hash
// cache sees it: the absolute path its keys start with and the validity
// policy of its filesystem.
type cacheSide = hashcache.Side

// cached is what the cache knows of an entry, looked up by the walker.
type cached struct {
	src, dst       verify.Sum
	srcOK, dstOK   bool // the entry exists and is valid for the file as it is now
	srcKey, dstKey string
	readAt         int64 // the destination entry's ReadAt, when dstOK
	// rotten: --scrub found the destination file not to hold rec, the
	// digest its entry recorded, its stat unchanged (scrub.go).
	rotten bool
	rec    verify.Sum
	// moveRec: --move, and the destination's entry was valid, its digest
	// in dst: checkEntry reads the file from the device all the same, and
	// finds it rotten where it does not give dst.
	moveRec bool
}

// resolutions sets the resolution the mtimes of one directory's files are
// compared at, and returns the destination directory's cache policy.
func (dc *decider) resolutions(srcSide cacheSide, dst *handle, ens []entry) hashcache.Policy {
	e := dc.e
	dstPolicy := e.dstSide.Policy
	if dst != nil {
		if st, err := dst.d.Stat(); err == nil {
			dstPolicy = dc.dstPolicy(dst.d, st.Dev)
			if e.cache != nil {
				e.fs.volumeOf(dst.d, st.Dev)
			}
		}
	}
	// A copy keeps only as much of the source's mtime as the destination
	// stores, so the two are compared at the coarser resolution.
	g := max(srcSide.Policy.Granularity(), dstPolicy.Granularity())
	for i := range ens {
		ens[i].gran = g
		ens[i].srcRes = srcSide.Policy.Granularity()
		ens[i].srcInoLoose = !srcSide.Policy.CheckInode
	}
	return dstPolicy
}

// lookupCache sets the resolution the mtimes of one directory's files are
// compared at, and fills in what the cache knows of its regular files, in
// one read transaction per side. src and dst are the directories (dst nil
// when there is none yet).
func (dc *decider) lookupCache(srcSide cacheSide, src, dst *handle, srcRel, dstRel string, ens []entry) {
	e := dc.e
	dstPolicy := dc.resolutions(srcSide, dst, ens)
	if e.cache == nil {
		return
	}
	// Where either side has no change time to rely on, the cache cannot
	// vouch for a file's content (see hashcache.Policy.Vouches): sameContent
	// then decides as without a cache, by size and mtime, and reads where
	// it must know (--checksum, a manifest).
	vouch := srcSide.Policy.Vouches() && dstPolicy.Vouches()
	q := dc.cacheKeys(srcSide, src, srcRel, dstRel, ens, vouch)
	q.dstPolicy = dstPolicy
	if len(q.movedIdx) > 0 {
		// DEST's filesystem keeps no change time (exFAT, FAT) and coarse
		// mtimes: size and mtime there can match a source rewritten since
		// its copy. The source's own entry, recorded when it was last read
		// (by the copy, or a check since), tells whether it was.
		for j, r := range e.cache.Lookup(q.movedKeys) {
			en := &ens[q.movedIdx[j]]
			en.srcMoved = r.Found && statMoved(r.Entry, hashcache.StateOf(&en.st, q.volume(en.st.Dev)), srcSide.Policy)
		}
	}
	if len(q.idx) == 0 {
		return
	}
	srcRes := e.cache.Lookup(q.srcKeys)
	dstRes := e.cache.Lookup(q.dstKeys)
	for j, i := range q.idx {
		dc.takeCached(&ens[i], srcRes[j], dstRes[j], q)
	}
}

// cacheQuery is one directory's look-ups in the hash cache: the keys of
// both sides of the files to compare (idx, their places in the listing),
// and the source keys of those only the source's entry can tell about
// (movedIdx), with what their entries are judged by.
type cacheQuery struct {
	e                           *engine
	srcPolicy, dstPolicy        hashcache.Policy
	dstRel                      string // the destination directory
	srcKeys, dstKeys, movedKeys []string
	idx, movedIdx               []int
	vols                        map[uint64]hashcache.Volume
}

// volume is the known volume of the filesystem dev, asked once.
func (q *cacheQuery) volume(dev uint64) hashcache.Volume {
	v, ok := q.vols[dev]
	if !ok {
		v = q.e.fs.knownVolume(dev)
		q.vols[dev] = v
	}
	return v
}

// cacheKeys gathers the keys to look up for the regular files of ens (the
// source directory src, at srcRel) and notes, for the entries stored once
// they are read, the volume and a directory of each source filesystem.
func (dc *decider) cacheKeys(srcSide cacheSide, src *handle, srcRel, dstRel string, ens []entry, vouch bool) *cacheQuery {
	e := dc.e
	q := &cacheQuery{e: e, srcPolicy: srcSide.Policy, dstRel: dstRel, vols: map[uint64]hashcache.Volume{}}
	learned, seen := uint64(0), false
	for i := range ens {
		en := &ens[i]
		if !en.st.IsRegular() {
			continue
		}
		en.srcKey = srcSide.Key(joinRel(srcRel, en.name))
		if !seen || en.st.Dev != learned {
			// For the entry stored once the file is read, and the flush
			// of its filesystem before it is (see rememberSource).
			e.fs.volumeOf(src.d, en.st.Dev)
			if st, err := src.d.Stat(); err == nil && st.Dev == en.st.Dev {
				e.record.read.add(st.Dev, src.d, true)
			}
			learned, seen = en.st.Dev, true
		}
		if en.dstSt == nil || !en.dstSt.IsRegular() || en.dstSt.Size != en.st.Size {
			if en.dstSt != nil && e.scrub.found() {
				e.scrub.rottenAt(e.dstSide.Key(joinRel(dstRel, en.dstName))) // noted as met
			}
			continue // nothing to compare: the file is copied anyway
		}
		if !vouch {
			if srcSide.Policy.Vouches() {
				q.movedKeys = append(q.movedKeys, en.srcKey)
				q.movedIdx = append(q.movedIdx, i)
			}
			continue
		}
		en.cache = &cached{
			srcKey: en.srcKey,
			dstKey: e.dstSide.Key(joinRel(dstRel, en.dstName)),
		}
		q.srcKeys = append(q.srcKeys, en.cache.srcKey)
		q.dstKeys = append(q.dstKeys, en.cache.dstKey)
		q.idx = append(q.idx, i)
	}
	return q
}

// takeCached fills in en.cache from the look-ups of its source (sr) and
// destination (dr) entries, valid by the policies of their filesystems.
func (dc *decider) takeCached(en *entry, sr, dr hashcache.LookupResult, q *cacheQuery) {
	e := dc.e
	srcPolicy, dstPolicy := q.srcPolicy, q.dstPolicy
	// An entry without a digest a record needs does not vouch: the
	// source is read for it (records.Hashes.FromCache).
	if sr.Found && sr.Entry.Valid(hashcache.StateOf(&en.st, q.volume(en.st.Dev)), srcPolicy) && e.records.cachedExtras(en, sr.Entry) {
		en.cache.src, en.cache.srcOK = sr.Entry.Sum, true
	}
	if dr.Found && dr.Entry.Valid(hashcache.StateOf(en.dstSt, q.volume(en.dstSt.Dev)), dstPolicy) {
		en.cache.dst, en.cache.dstOK, en.cache.readAt = dr.Entry.Sum, true, dr.Entry.ReadAt
		if e.opt.Move {
			// A cache entry vouches for a stat, never for bytes: a
			// source is removed only once its copy was read from the
			// device in this run (checkEntry), and a copy that does
			// not give the digest recorded for it is rotten.
			en.cache.dstOK, en.cache.moveRec = false, true
		}
	} else if dr.Found && dr.Entry.Rotten && dr.Entry.Unmarked().Valid(hashcache.StateOf(en.dstSt, q.volume(en.dstSt.Dev)), dstPolicy) {
		// An earlier run found it rotten and could not repair it.
		e.scrub.note(en.cache.dstKey, joinRel(q.dstRel, en.dstName), dr.Entry.Sum, foundEarlier)
	}
	if rec, ok := e.scrub.rottenAt(en.cache.dstKey); ok {
		// Neither side's entry decides: checkEntry reads both.
		en.cache.rotten, en.cache.rec = true, rec
		en.cache.srcOK, en.cache.dstOK = false, false
	}
}

// statMoved reports whether cur, a file's stat now, is not the one its
// cache entry ent was recorded with, as far as policy p trusts the fields:
// the exact size and mtime, the change time and the inode where p checks
// them. An entry of another volume (or of an unknown one) tells nothing.
func statMoved(ent hashcache.Entry, cur hashcache.FileState, p hashcache.Policy) bool {
	if cur.Volume == 0 || ent.Volume != cur.Volume {
		return false
	}
	return ent.Size != cur.Size || ent.Mtime != cur.Mtime ||
		(p.CheckCtime && ent.Ctime != cur.Ctime) || (p.CheckInode && ent.Ino != cur.Ino)
}

// dstPolicy is the validity policy of the destination filesystem dev (d a
// directory on it), its mtime granularity the resolution the filesystem
// was found to store (see timeResolution).
func (dc *decider) dstPolicy(d *fileio.Dir, dev uint64) hashcache.Policy {
	e := dc.e
	p := e.dstSide.Policy
	if dev != e.dstDev {
		fsType, _ := fileio.FSType(d.Path()) // a filesystem mounted inside DEST
		p = hashcache.PolicyFor(fsType)
	}
	p.MtimeGranularity = time.Duration(e.fs.timeResolution(d, dev, p))
	return p
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// rememberSource stores the digest of a source read from start to end
// while its stat stayed st.
// An entry is stored only where the file's volume has an identity: on
// another, it could never be trusted.
//
// And only once the data it describes is on the source's stable storage. A
// file rewritten in place shortly before the run has its new stat in the
// filesystem's journal within seconds, while its data may stay in memory
// for half a minute (ext4, xfs): a power cut of the source then brings back
// the old bytes under the new stat, which the entry would vouch for. So
// entries are held, and stored in batches after a syncfs of their
// filesystem (through a directory on it the walk noted: see lookupCache),
// which costs nothing where nothing is dirty (a read-only or idle source).
// An entry whose filesystem could not be flushed is dropped.
func (cr *cacheRecorder) rememberSource(key string, st *fileio.Stat, sum verify.Sum, extra map[string]string, started time.Time) {
	e := cr.e
	ent, ok := e.decide.entryFor(key, st, sum, started)
	if !ok {
		return
	}
	ent = withDigests(ent, extra) // records.go
	e.mu.Lock()
	cr.held = append(cr.held, heldEntry{key, st.Dev, ent})
	var batch []heldEntry
	if len(cr.held) >= heldBatch {
		batch, cr.held = cr.held, nil
	}
	e.mu.Unlock()
	cr.storeHeld(batch)
}

// heldEntry is a source's cache entry waiting for its filesystem's flush.
type heldEntry struct {
	key string
	dev uint64
	en  hashcache.Entry
}

// heldBatch is how many source entries are held before a flush of their
// filesystems stores them.
const heldBatch = 1 << 16

// rememberHeld stores the source entries still held, at the end of the run.
func (cr *cacheRecorder) rememberHeld() {
	e := cr.e
	e.mu.Lock()
	batch := cr.held
	cr.held = nil
	e.mu.Unlock()
	cr.storeHeld(batch)
}

// storeHeld flushes each source filesystem of batch once and stores the
// entries of those that were flushed.
//
// Where a filesystem cannot be flushed as a whole but each file can be
// (Windows without administrator rights: IsFallback), each entry's file is
// flushed by itself (fileio.FlushPath) and its entry stored if the file
// flushed is the one it describes.
func (cr *cacheRecorder) storeHeld(batch []heldEntry) {
	e := cr.e
	flushed := map[uint64]bool{}
	perFile := map[uint64]bool{}
	for _, h := range batch {
		ok, done := flushed[h.dev]
		if !done {
			d, known := cr.read.dir(h.dev)
			if known {
				err := fileio.Syncfs(d)
				ok = err == nil
				perFile[h.dev] = fileio.IsFallback(err)
			}
			flushed[h.dev] = ok
		}
		if ok || (perFile[h.dev] && flushedAlone(h)) {
			e.cache.Put(h.key, h.en)
		}
	}
}

// flushedAlone flushes the file of h by its path and reports whether it is
// the file h describes, as it was when read.
func flushedAlone(h heldEntry) bool {
	st, err := fileio.FlushPath(h.key)
	return err == nil && st.Ino == h.en.Ino && st.Size == h.en.Size && st.Mtime == h.en.Mtime && st.Ctime == h.en.Ctime
}

func (cr *cacheRecorder) remember(key string, st *fileio.Stat, sum verify.Sum, started time.Time, readAt int64) {
	e := cr.e
	if ent, ok := e.decide.entryFor(key, st, sum, started); ok {
		ent.ReadAt = readAt
		e.cache.Put(key, ent)
	}
}

// deviceRead is the hashcache.Entry.ReadAt of a read that began at t
// from the device itself (zero t: none).
func deviceRead(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// entryFor builds the cache entry of a file in the state st: none without
// a cache, for an empty file, or on a volume with no known identity.
func (dc *decider) entryFor(key string, st *fileio.Stat, sum verify.Sum, started time.Time) (hashcache.Entry, bool) {
	e := dc.e
	if e.cache == nil || key == "" || st.Size == 0 || e.skipWrite() {
		return hashcache.Entry{}, false // a dry run stores nothing
	}
	vol := e.fs.knownVolume(st.Dev)
	if vol == 0 {
		return hashcache.Entry{}, false
	}
	return hashcache.Entry{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Sum: sum, HashedAt: started.UnixNano(), Volume: vol}, true
}

// sameContent decides, for a destination file as large as its source,
// whether it already holds the source's content without reading either when
// it can: both cache entries valid and equal. Without a cache, or where it
// cannot vouch for either side (see lookupCache), the rsync rule applies
// (same size and mtime), unless --checksum. Cases the stats and the
// cache cannot settle are marked for a check by a worker (en.check), which
// reads what it must. Its verdict is needSkip when the file holds the
// content (its mtime to be set where it differs: fixTimes), needCopy
// otherwise.
func (dc *decider) sameContent(en *entry) verdict {
	e := dc.e
	d, s := en.dstSt, &en.st
	copyIt, skip := verdict{kind: needCopy}, verdict{kind: needSkip}
	if d.Size != s.Size {
		return copyIt
	}
	same := hashcache.SameTime(d.Mtime, s.Mtime, en.gran)
	c := en.cache
	switch {
	case en.contested && s.Size > 0:
		// The destination file may hold the other name's bytes (destfs.FoldPlan.Contested):
		// read it, whatever its mtime or the cache says.
		en.check = true
		return copyIt
	case s.Size == 0:
		// Two empty files hold the same (no) bytes: nothing to remember or
		// read, whatever the cache says.
		skip.fixTimes = !same
		return skip
	case en.srcMoved && same:
		// The source changed since it was last read, which DEST's coarse
		// times cannot show (lookupCache): read both.
		en.check = true
		return copyIt
	case e.cache == nil || c == nil:
		// A manifest (or an ASC MHL generation) lists the source's
		// digest, and a destination file with another is not the same
		// file: both are read.
		if e.opt.Checksum || e.opt.listsSums() { // a dry run decides as the real run
			en.check = true
			return copyIt
		}
		if same {
			return skip
		}
		return copyIt
	case c.srcOK && c.dstOK:
		if c.src != c.dst {
			return copyIt
		}
		// Where the mtime differs, the entry vouches that the file's data
		// was flushed: its new state is recorded at once (fixTimes).
		skip.hits, skip.fixTimes, skip.timesSum = 2, !same, c.dst
		return skip
	case !same && !c.dstOK && !e.opt.Checksum:
		return copyIt // the rsync rule: another mtime and nothing vouching otherwise
	}
	en.check = true
	return copyIt
}

// fixTimes gives an unchanged destination file its source's times (only the
// mtime moved) and records its new state in the cache: now when its data is
// known to be flushed (flushed), after the run's final flush otherwise.
// vouched is the stat the file's digest sum was taken or found valid with.
//
// A file with other names (a dedup link, a cp -al snapshot) is not changed:
// the times are its other names' too, so it is replaced by a copy instead
// (false). The times are set through a descriptor of the file (a
// fileio.Node), which must still be as vouched for just before; the stat
// recorded with sum is taken through it just after and must show only the
// change made; and where the platform can watch the file (inotify) no
// write may have completed in between. A write meanwhile makes the file
// copied instead, never recorded with a digest of what it held before.
func (dc *decider) fixTimes(dst *handle, en *entry, sum verify.Sum, vouched *fileio.Stat, flushed bool) bool {
	e := dc.e
	if vouched.Nlink > 1 {
		return false
	}
	if dst == nil || e.skipWrite() {
		en.fixed = dst != nil // a dry run says the times would be set
		return true
	}
	n, err := dst.d.OpenNode(en.dstName)
	if err != nil {
		return false // copied instead
	}
	defer n.Close()
	// A write that lands between the check below and the utimes would
	// have its mtime replaced by the source's, and the stat could not
	// tell: where it can, the file is watched for writes meanwhile.
	written, watched := n.WatchWrites()
	if before, err := n.Restat(); err != nil || !before.IsRegular() || before.Nlink > 1 || changed(vouched, &before) {
		if watched {
			written()
		}
		return false
	}
	if err := n.SetTimes(en.st.Atime, en.st.Mtime); err != nil {
		if watched {
			written()
		}
		return false
	}
	st, err := n.Restat()
	if watched && written() {
		return false
	}
	if err != nil || st.Size != vouched.Size || st.Nlink > 1 || !hashcache.SameTime(st.Mtime, en.st.Mtime, en.gran) {
		return false
	}
	if en.cache != nil {
		if flushed {
			e.record.rememberDest(en.cache.dstKey, &st, sum, time.Now(), en.cache.readAt)
		} else {
			e.record.rememberDestLater(en.cache.dstKey, &st, sum, time.Now(), en.cache.readAt)
		}
	}
	en.fixed = true // reported with the skip
	return true
}

// rememberDest stores the digest of a destination file that was verified
// and whose data is flushed: the cache never holds a destination entry
// whose data could still be lost to a power cut (the file would then come
// back empty or zero-filled, maybe with the stat the entry matches).
// readAt is when its bytes were last read from the device and found to
// hold sum (hashcache.Entry.ReadAt), zero when unknown.
func (cr *cacheRecorder) rememberDest(key string, st *fileio.Stat, sum verify.Sum, started time.Time, readAt int64) {
	cr.remember(key, st, sum, started, readAt)
}

// checkEntry settles a file whose size matches its destination but whose
// sameness the stats and the cache could not decide: it takes each side's
// digest from the cache or by reading it, and reports true when they are
// equal (the file is then done: skipped, its times brought up to date).
func (dc *decider) checkEntry(c *chunk, en *entry, rel string, buf []byte) bool {
	k, ok := dc.readSides(c, en, buf)
	if !ok || !dc.rottenForMove(c, en, rel, buf, &k) {
		return false // copied, which reports a real error
	}
	if en.cache != nil && en.cache.rotten {
		// --scrub found DEST's file rotten: it is copied again only from
		// a source that still holds the digest recorded for it.
		return dc.e.scrub.settle(en, rel, k.src)
	}
	if k.src != k.dst {
		return false
	}
	en.equal = true // replacing it loses nothing (see respelled)
	if _, _, _, _, differs := dc.metaWanted(en); differs && en.dstSt.Nlink > 1 {
		return false // a shared inode cannot take new metadata: replace the name
	}
	return dc.keepChecked(c, en, rel, &k)
}

// checked is what checkEntry found of an entry: each side's digest, taken
// from the cache (srcOK, dstOK) or read.
type checked struct {
	src, dst     verify.Sum
	srcOK, dstOK bool
	vouched      *fileio.Stat // the destination's stat its digest holds for
	found        *fileio.Stat // the destination as read, when it was
	foundAt      time.Time
	foundRead    int64 // hashcache.Entry.ReadAt of that read
}

// readSides takes each side's digest of en from the cache where its entry
// vouches, else by reading the file (the source's digest then recorded
// for the cache); false when a read failed.
func (dc *decider) readSides(c *chunk, en *entry, buf []byte) (checked, bool) {
	e := dc.e
	var k checked
	if en.cache != nil {
		k.src, k.srcOK, k.dst, k.dstOK = en.cache.src, en.cache.srcOK, en.cache.dst, en.cache.dstOK
	}
	hits := int64(0)
	if k.srcOK {
		hits++
	} else {
		started := time.Now()
		sum, err := e.dedupe.hashSource(c.src.d, en, buf)
		if err != nil {
			return k, false
		}
		e.count(func(s *Summary) { s.BytesHashed += en.st.Size })
		e.record.rememberSource(en.srcKey, &en.st, sum, en.extra, started)
		k.src = sum
	}
	k.vouched = en.dstSt // the stat the cache entry was found valid with
	if k.dstOK && !en.contested {
		hits++
	} else {
		started := time.Now()
		sum, st, err := dc.hashDest(c.dst.d, en.dstName, buf, e.opt.Move)
		if err != nil {
			return k, false
		}
		e.count(func(s *Summary) { s.BytesHashed += st.Size })
		k.found, k.foundAt = &st, started
		if e.opt.Move {
			k.foundRead = deviceRead(started) // read from the device (hashDest)
		}
		k.dst, k.vouched = sum, &st
	}
	e.count(func(s *Summary) { s.CacheHits += hits })
	return k, true
}

// rottenForMove marks, under --move, a copy that does not give the digest
// its cache entry recorded for it as rotten: the source it would be
// removed for is copied again only from a source that gives the digest
// recorded for both (read now if it came from the cache), and removed
// once that copy is verified. False when that read failed.
func (dc *decider) rottenForMove(c *chunk, en *entry, rel string, buf []byte, k *checked) bool {
	e := dc.e
	ch := en.cache
	if ch == nil || !ch.moveRec || ch.rotten || k.dst == ch.dst || ch.dst != k.src {
		return true
	}
	e.scrub.note(ch.dstKey, rel, ch.dst, foundByMove)
	e.scrub.rottenAt(ch.dstKey)
	ch.rotten, ch.rec = true, ch.dst
	if k.srcOK {
		sum, err := e.dedupe.hashSource(c.src.d, en, buf)
		if err != nil {
			return false
		}
		e.count(func(s *Summary) { s.BytesHashed += en.st.Size; s.CacheHits-- })
		k.src = sum
	}
	return true
}

// keepChecked keeps in place a file checkEntry found to hold its source's
// bytes: its times and metadata brought up to date, its new state recorded
// for the cache, its other names' group done, reported as skipped and
// noted for --move. False when its times cannot be set: it is copied.
func (dc *decider) keepChecked(c *chunk, en *entry, rel string, k *checked) bool {
	e := dc.e
	if !hashcache.SameTime(en.dstSt.Mtime, en.st.Mtime, en.gran) {
		if !dc.fixTimes(c.dst, en, k.dst, k.vouched, k.dstOK) { // it records the file's new state
			return false
		}
	} else if k.found != nil && en.cache != nil {
		// Kept as it was found, and read: its data may not be flushed yet.
		// (A file that is replaced gets its entry from its copy.)
		e.record.rememberDestLater(en.cache.dstKey, k.found, k.dst, k.foundAt, k.foundRead)
	}
	dc.fixMeta(c.dst, en)
	if en.group != nil {
		en.group.ok, en.group.sum, en.group.ino = true, k.src, devIno{k.vouched.Dev, k.vouched.Ino}
		en.group.extra = en.extra
		close(en.group.done)
	}
	o := skipOutcome(rel, en.st.Size, en.fixed, k.src)
	o.Extra, o.Listed = en.extra, true
	e.report(o)
	e.moves.note(c.src, en, rel, k.src)
	return true
}

// hashDest reads a destination file for its digest, failing if it moved;
// from the device itself, its cached pages dropped first, when device.
func (dc *decider) hashDest(dd *fileio.Dir, name string, buf []byte, device bool) (verify.Sum, fileio.Stat, error) {
	e := dc.e
	f, err := dd.Open(name, false)
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, err
	}
	if device {
		_ = f.DropCache() // what is cached must not answer for the device
	}
	sum, n, err := verify.Stream(f, before.Size, false, buf, e.bw.Sink(e.ctx))
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, err
	}
	e.stats.BytesRead.Add(n)
	after, err := f.Stat()
	if err != nil {
		return verify.Sum{}, fileio.Stat{}, err
	}
	if changed(&before, &after) || n != before.Size {
		return verify.Sum{}, fileio.Stat{}, errChanged
	}
	return sum, after, nil
}

// laterEntry is a destination entry held back until the final flush.
type laterEntry struct {
	key string
	en  hashcache.Entry
}

// rememberDestLater is rememberDest for a destination file whose data this
// run did not flush (one found in place and read): it is stored by
// rememberFlushed, after the run's final flush, and dropped with --no-sync.
func (cr *cacheRecorder) rememberDestLater(key string, st *fileio.Stat, sum verify.Sum, started time.Time, readAt int64) {
	e := cr.e
	ent, ok := e.decide.entryFor(key, st, sum, started)
	if !ok {
		return
	}
	ent.ReadAt = readAt
	e.mu.Lock()
	cr.later = append(cr.later, laterEntry{key, ent})
	e.mu.Unlock()
}

// rememberFlushed stores the entries held back, once every filesystem
// written has been flushed.
func (cr *cacheRecorder) rememberFlushed() {
	e := cr.e
	e.mu.Lock()
	later := cr.later
	cr.later = nil
	e.mu.Unlock()
	for _, l := range later {
		e.cache.Put(l.key, l.en)
	}
}
