package copyengine

import (
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/cacheuse"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/scrub"
	"github.com/fastcopy/fastcopy/verify"
)

// cacheSide is one side (a source root, or the destination) as the hash
// cache sees it: the absolute path its keys start with and the validity
// policy of its filesystem.
type cacheSide = hashcache.Side

// cached is what the cache knows of an entry, looked up by the walker
// (cacheuse.Answer), with --scrub's word on its destination.
type cached = cacheuse.Answer

// resolutions sets the resolution the mtimes of one directory's files are
// compared at, and returns the destination directory's cache policy.
func (dc *decider) resolutions(srcSide cacheSide, dst *handle, ens []entry) hashcache.Policy {
	e := dc.e
	dstPolicy := e.dstSide.Policy
	if dst != nil {
		if st, err := dst.d.Stat(); err == nil {
			dstPolicy = dc.dstPolicy(dst.d, st.Dev)
			if e.cache != nil {
				e.fs.info.VolumeOf(dst.d, st.Dev)
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
// compared at, and fills in what the cache knows of its regular files
// (cacheuse.Lookup). src and dst are the directories (dst nil when there
// is none yet).
func (dc *decider) lookupCache(srcSide cacheSide, src, dst *handle, srcRel, dstRel string, ens []entry) {
	e := dc.e
	q := cacheuse.Query{Src: srcSide.Policy, Dst: dc.resolutions(srcSide, dst, ens)}
	if e.cache == nil {
		return
	}
	// Where either side has no change time to rely on, the cache cannot
	// vouch for a file's content (see hashcache.Policy.Vouches): sameContent
	// then decides as without a cache, by size and mtime, and reads where
	// it must know (--checksum, a manifest).
	idx := dc.cacheKeys(srcSide, src, srcRel, dstRel, ens, &q)
	ans := cacheuse.Lookup(e.cacheUse(), q)
	for j := range ans {
		dc.takeCached(&ens[idx[j]], &ans[j], dstRel)
	}
}

// cacheUse is the run's input to package cacheuse.
func (e *engine) cacheUse() cacheuse.Config {
	return cacheuse.Config{Cache: e.opt.Cache, Volume: e.fs.info.KnownVolume, Move: e.opt.Move, SkipWrite: e.skipWrite}
}

// cacheKeys sets the source key of each regular file of ens (the source
// directory src, at srcRel) and gathers into q those whose destination is
// a regular file of the same size, returning their places in ens. It
// notes, for the entries stored once they are read, the volume and a
// directory of each source filesystem.
func (dc *decider) cacheKeys(srcSide cacheSide, src *handle, srcRel, dstRel string, ens []entry, q *cacheuse.Query) []int {
	e := dc.e
	var idx []int
	learned, seen := uint64(0), false
	for i := range ens {
		en := &ens[i]
		if !en.st.IsRegular() {
			continue
		}
		en.srcKey = srcSide.Key(joinRel(srcRel, en.name))
		if !seen || en.st.Dev != learned {
			// For the entry stored once the file is read, and the flush
			// of its filesystem before it is (cacheuse.Recorder.Source).
			e.fs.info.VolumeOf(src.d, en.st.Dev)
			if st, err := src.d.Stat(); err == nil && st.Dev == en.st.Dev {
				e.record.NoteSource(st.Dev, src.d)
			}
			learned, seen = en.st.Dev, true
		}
		if en.dstSt == nil || !en.dstSt.IsRegular() || en.dstSt.Size != en.st.Size {
			if en.dstSt != nil && e.scrub.Found() {
				e.scrub.RottenAt(e.dstSide.Key(joinRel(dstRel, en.dstName))) // noted as met
			}
			continue // nothing to compare: the file is copied anyway
		}
		q.Files = append(q.Files, cacheuse.File{SrcKey: en.srcKey, DstKey: e.dstSide.Key(joinRel(dstRel, en.dstName)), Src: &en.st, Dst: en.dstSt})
		idx = append(idx, i)
	}
	return idx
}

// takeCached keeps with en the answer a for its file: an entry without a
// digest a record needs does not vouch (the source is read for it:
// records.Hashes.FromCache); --scrub's ledger notes what an earlier run
// found rotten, and says what this one found.
func (dc *decider) takeCached(en *entry, a *cacheuse.Answer, dstRel string) {
	e := dc.e
	en.srcMoved = a.Moved // sameContent reads both
	if !a.Asked {
		return
	}
	if a.SrcOK && !e.records.cachedExtras(en, a.SrcEntry) {
		a.SrcOK, a.Src = false, verify.Sum{}
	}
	a.SrcEntry = hashcache.Entry{}
	if a.Earlier {
		e.scrub.Note(a.DstKey, joinRel(dstRel, en.dstName), a.Rec, scrub.Earlier)
	}
	if rec, ok := e.scrub.RottenAt(a.DstKey); ok {
		// Neither side's entry decides: checkEntry reads both.
		a.Rotten, a.Rec = true, rec
		a.SrcOK, a.DstOK = false, false
	}
	en.cache = a
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
	p.MtimeGranularity = time.Duration(e.fs.info.TimeResolution(d, dev, p))
	return p
}

// sameContent decides, for a destination file as large as its source,
// whether it already holds the source's content without reading either when
// it can (cacheuse.Compare: both cache entries valid and equal, else the
// rsync rule unless --checksum). Cases the stats and the cache cannot
// settle are marked for a check by a worker (en.check), which reads what it
// must. Its verdict is needSkip when the file holds the content (its mtime
// to be set where it differs: fixTimes), needCopy otherwise. A dry run
// decides as the real run.
func (dc *decider) sameContent(en *entry) verdict {
	e := dc.e
	v := cacheuse.Compare(cacheuse.Pair{
		Src: &en.st, Dst: en.dstSt, Gran: en.gran,
		Answer: en.cache, Moved: en.srcMoved, Contested: en.contested,
		Checksum: e.opt.Checksum, Lists: e.opt.listsSums(),
	})
	switch v.Kind {
	case cacheuse.Holds:
		return verdict{kind: needSkip, fixTimes: v.FixTimes, timesSum: v.TimesSum, hits: v.Hits}
	case cacheuse.Unsure:
		en.check = true
	}
	return verdict{kind: needCopy}
}

// fixTimes gives an unchanged destination file its source's times (only the
// mtime moved) and records its new state in the cache: now when its data is
// known to be flushed (flushed), after the run's final flush otherwise.
// vouched is the stat the file's digest sum was taken or found valid with.
// The times are set only while the file stays as vouched for
// (cacheuse.Retime); where they cannot be, it is replaced by a copy
// instead (false), as is a file with other names (a dedup link, a cp -al
// snapshot), whose times are its other names' too.
func (dc *decider) fixTimes(dst *handle, en *entry, sum verify.Sum, vouched *fileio.Stat, flushed bool) bool {
	e := dc.e
	if vouched.Nlink > 1 {
		return false
	}
	if dst == nil || e.skipWrite() {
		en.fixed = dst != nil // a dry run says the times would be set
		return true
	}
	st, ok := cacheuse.Retime(dst.d, en.dstName, vouched, en.st.Atime, en.st.Mtime, en.gran)
	if !ok {
		return false // copied instead
	}
	if en.cache != nil {
		if flushed {
			e.record.Dest(en.cache.DstKey, &st, sum, time.Now(), en.cache.ReadAt)
		} else {
			e.record.DestLater(en.cache.DstKey, &st, sum, time.Now(), en.cache.ReadAt)
		}
	}
	en.fixed = true // reported with the skip
	return true
}

// checkVerdict is what checkEntry found a file to need.
type checkVerdict int8

const (
	checkCopy   checkVerdict = iota // copied (a read failed, the digests differ, or the name must be replaced)
	checkRotten                     // --scrub or --move found DEST's file rotten: scrubber.settle decides
	checkKeep                       // it holds its source's bytes: kept in place (keepChecked)
)

// checkEntry settles a file whose size matches its destination but whose
// sameness the stats and the cache could not decide: it takes each side's
// digest from the cache or by reading it (readSides), and answers what the
// file needs, with what was found; the copier carries it out (carryCheck).
func (dc *decider) checkEntry(c *chunk, en *entry, rel string, buf []byte) (checkVerdict, cacheuse.Checked) {
	k, ok := dc.readSides(c, en, rel, buf)
	if !ok {
		return checkCopy, k // copied, which reports a real error
	}
	if en.cache != nil && en.cache.Rotten {
		// --scrub found DEST's file rotten: it is copied again only from
		// a source that still holds the digest recorded for it.
		return checkRotten, k
	}
	if k.Src != k.Dst {
		return checkCopy, k
	}
	en.equal = true // replacing it loses nothing (see respelled)
	if _, _, _, _, differs := dc.metaWanted(en); differs && en.dstSt.Nlink > 1 {
		return checkCopy, k // a shared inode cannot take new metadata: replace the name
	}
	return checkKeep, k
}

// carryCheck checks a file marked for it (en.check) and carries out the
// decider's verdict; true when the file is done (kept in place, or failed
// as rotten on both sides), false when it is to be copied.
func (cp *copier) carryCheck(c *chunk, en *entry, rel string, buf []byte) bool {
	e := cp.e
	switch v, k := e.decide.checkEntry(c, en, rel, buf); v {
	case checkRotten:
		return e.scrub.settle(en, rel, k.Src)
	case checkKeep:
		return e.decide.keepChecked(c, en, rel, &k)
	}
	return false
}

// readSides runs the check of en (cacheuse.Check) and carries out what it
// found: the bytes hashed and the cache's answers counted, the source's
// digest recorded for the cache where it was read, a copy --move found
// rotten noted in --scrub's ledger; false when a read failed.
func (dc *decider) readSides(c *chunk, en *entry, rel string, buf []byte) (cacheuse.Checked, bool) {
	e := dc.e
	chk := cacheuse.Check{
		Answer:     en.cache,
		ReadDst:    en.contested,
		Device:     e.opt.Move,
		SrcSize:    en.st.Size,
		ReadSource: func() (verify.Sum, error) { return e.dedupe.hashSource(c.src.d, en, buf) },
		DstStat:    en.dstSt,
		Dir:        c.dst.d, Name: en.dstName, Buf: buf, Sink: e.bw.Sink(e.ctx),
	}
	k, err := chk.Run()
	e.stats.BytesRead.Add(k.Read)
	if !k.SrcAt.IsZero() {
		e.record.Source(en.srcKey, &en.st, k.Src, en.extra, k.SrcAt)
	}
	if k.RottenByMove {
		// Copied again only from a source that gives the digest
		// recorded for both, and removed once that copy is verified.
		ch := en.cache
		e.scrub.Note(ch.DstKey, rel, ch.Dst, scrub.ByMove)
		e.scrub.RottenAt(ch.DstKey)
		ch.Rotten, ch.Rec = true, ch.Dst
	}
	e.count(func(s *Summary) { s.BytesHashed += k.Hashed; s.CacheHits += k.Hits })
	return k, err == nil
}

// keepChecked keeps in place a file checkEntry found to hold its source's
// bytes: its times and metadata brought up to date, its new state recorded
// for the cache, its other names' group done, reported as skipped and
// noted for --move. False when its times cannot be set: it is copied.
func (dc *decider) keepChecked(c *chunk, en *entry, rel string, k *cacheuse.Checked) bool {
	e := dc.e
	if !hashcache.SameTime(en.dstSt.Mtime, en.st.Mtime, en.gran) {
		if !dc.fixTimes(c.dst, en, k.Dst, k.Vouched, k.DstOK) { // it records the file's new state
			return false
		}
	} else if k.Found != nil && en.cache != nil {
		// Kept as it was found, and read: its data may not be flushed yet.
		// (A file that is replaced gets its entry from its copy.)
		e.record.DestLater(en.cache.DstKey, k.Found, k.Dst, k.FoundAt, k.FoundRead)
	}
	dc.fixMeta(c.dst, en)
	if en.group != nil {
		en.group.ok, en.group.sum, en.group.ino = true, k.Src, devIno{k.Vouched.Dev, k.Vouched.Ino}
		en.group.extra = en.extra
		close(en.group.done)
	}
	o := skipOutcome(rel, en.st.Size, en.fixed, k.Src)
	o.Extra, o.Listed = en.extra, true
	e.report(o)
	e.moves.note(c.src, en, rel, k.Src)
	return true
}

// hashDest reads a destination file for its digest, failing if it moved;
// from the device itself, its cached pages dropped first, when device
// (cacheuse.ReadDest).
func (dc *decider) hashDest(dd *fileio.Dir, name string, buf []byte, device bool) (verify.Sum, fileio.Stat, error) {
	sum, st, n, err := cacheuse.ReadDest(dd, name, buf, device, dc.e.bw.Sink(dc.e.ctx))
	dc.e.stats.BytesRead.Add(n)
	return sum, st, err
}
