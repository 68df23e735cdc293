package copyengine

import (
	"sort"
	"sync"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/meta"
	"github.com/fastcopy/fastcopy/internal/transfer"
	"github.com/fastcopy/fastcopy/verify"
)

// deduper is the stage that places duplicates: it indexes the files the
// run writes by content, and once the committer is done it gives each
// duplicate the data of the file it duplicates (a clone or a hard link).
type deduper struct {
	e           *engine
	ix          *dedup.Index // nil with --dedup=off
	dups        []dupFile    // duplicates waiting to share a placed file's data (under mu)
	destTargets sync.Once    // the index takes DEST's content before the first file is written
	// followers are the further names of source inodes, linked to the
	// first name once it is placed (addFollower; under mu).
	followers []linkFollower
	mu        sync.Mutex     // the stage's own: guards dups and followers
	dry       dedup.Forecast // a dry run's index (wouldDedup)
}

// newDeduper is the engine's deduper; a dry run's index takes DEST's
// content at its first file, as the real run's does.
func newDeduper(e *engine) *deduper {
	dp := &deduper{e: e}
	dp.dry.Load = func(add func(*dedup.Target)) { dp.destContent().Targets(e.ctx, add) }
	return dp
}

// addFollower takes a further name of a source inode, to be linked to the
// first name once that is placed (linkFollowers), and holds back its new
// directory (f.stage) until then.
func (dp *deduper) addFollower(f linkFollower) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if f.stage != nil {
		f.stage.add()
	}
	dp.followers = append(dp.followers, f)
}

// dupFile is a file whose content an earlier file of the run already holds;
// it is placed after the committer is done, by sharing that file's data.
type dupFile struct {
	src, dst *handle
	en       entry
	rel      string
	sum      verify.Sum
	target   *dedup.Target
	stage    *stage // the new directory it is placed in, held back until it is
}

// dedupMeta is what a hard link would share between two files.
func (dp *deduper) dedupMeta(st *fileio.Stat) dedup.Meta {
	e := dp.e
	uid, gid, kept := e.owner(st)
	m := dedup.Meta{Mode: mode(st, kept), Mtime: st.Mtime, Uid: uint32(e.euid), Gid: uint32(e.egid)}
	if uid >= 0 {
		m.Uid = uint32(uid)
	}
	if gid >= 0 {
		m.Gid = uint32(gid)
	}
	return m
}

// beginDedup runs before a regular file is copied. A file whose size no
// other file shares is copied in one pass (it must then Register or
// Abandon: w.begun). A file whose size collides is hashed first; when a
// file of the run already holds the same bytes, it is set aside to share
// them (handled) instead of being written again, and otherwise it is
// written as the target Find made for it (w.claimed).
//
// When the file is to be written, pre (if not nil) holds the source still
// open, and its bytes when they fit in buf, for the fileCopy to use.
func (dp *deduper) beginDedup(c *chunk, en *entry, rel string, buf []byte) (handled bool, w dedup.Write, pre *preread) {
	e := dp.e
	size := en.st.Size
	dp.destTargets.Do(func() { dp.destContent().Targets(e.ctx, dp.ix.Add) })
	if !dp.ix.Begin(size, dp.proof().Gone) {
		return false, dedup.Write{Begun: true}, nil
	}
	pre, err := dp.readSource(c.src.d, en, buf)
	if err != nil {
		return false, dedup.Write{}, nil // copied without dedup; the copy reports a real error
	}
	e.record.Source(en.srcKey, &en.st, pre.Sum, en.extra, pre.Started)
	t, mine := dp.ix.Find(rel, size, pre.Sum, dp.dedupMeta(&en.st), func() bool { return dp.dest().LinkOnly() })
	if mine {
		return false, dedup.Write{Claimed: t}, pre
	}
	sum := pre.Sum
	pre.f.Close()
	dp.mu.Lock()
	if c.stage != nil {
		c.stage.add() // settled by placeDups
	}
	dp.dups = append(dp.dups, dupFile{src: c.src.retain(), dst: c.dst.retain(), en: *en, rel: rel, sum: sum, target: t, stage: c.stage})
	dp.mu.Unlock()
	return true, dedup.Write{}, nil
}

// proof is how the real run shows a target holds a duplicate's bytes
// before sharing it (dedup.Proof).
func (dp *deduper) proof() dedup.Proof {
	e := dp.e
	return dedup.Proof{OpenDir: e.staged.dirs.OpenDir, Bytes: e.opt.DedupVerifyBytes, Unverified: e.opt.Verify == VerifyOff,
		Bufs: &e.bufs, Meter: e.bw, Ctx: e.ctx, Count: func(n int64) { e.stats.BytesRead.Add(n) }}
}

// dest is what the real run's destination can do for a duplicate, as the
// run knows it now (dedup.Dest).
func (dp *deduper) dest() dedup.Dest {
	return dp.destWith(dp.e.clones.Broken(dp.e.dstDev))
}

// destWith is DEST for a duplicate, cannotClone saying whether it is
// known not to clone.
func (dp *deduper) destWith(cannotClone bool) dedup.Dest {
	e := dp.e
	return dedup.Dest{Mode: e.opt.Dedup, NoReflink: e.opt.Reflink == ReflinkNever, CannotClone: cannotClone, HasLinks: e.fs.info.HasLinks}
}

// preread is a source opened and read for its digest before the decision
// to write it, still open (f).
type preread struct {
	f *fileio.File
	transfer.Preread
}

// hashSource reads a source file for its digest, failing if it moved.
func (dp *deduper) hashSource(sd *fileio.Dir, en *entry, buf []byte) (verify.Sum, error) {
	pre, err := dp.readSource(sd, en, buf)
	if err != nil {
		return verify.Sum{}, err
	}
	pre.f.Close()
	return pre.Sum, nil
}

// readSource opens and reads a source for its digest, failing if it moved
// meanwhile, and returns it still open (transfer.ReadSource).
func (dp *deduper) readSource(sd *fileio.Dir, en *entry, buf []byte) (*preread, error) {
	e := dp.e
	f, pre, err := transfer.ReadSource(e.ctx, &transfer.PrereadJob{St: en.st, InoLoose: en.srcInoLoose, Res: en.srcRes, BufLen: len(buf),
		Open: func() (*fileio.File, error) { return e.copier.openSrc(sd, en) },
		Stream: func(f *fileio.File) (verify.Sum, int64, error) {
			sum, n, err := e.records.stream(en, e.source(f, &en.st), en.st.Size, buf, e.bw.Sink(e.ctx))
			if err == nil {
				e.stats.BytesRead.Add(n)
			}
			return sum, n, err
		}})
	if err != nil {
		return nil, err
	}
	return &preread{f: f, Preread: pre}, nil
}

// endDedup registers a written file as a target for later ones, or gives
// up its place when it was not written (dedup.Index.End).
func (dp *deduper) endDedup(p *pending, size int64, w dedup.Write) {
	if p == nil {
		dp.ix.End(w, size, nil)
		return
	}
	p.target = dp.ix.End(w, size, &dedup.Written{Rel: p.rel, Size: p.size, Sum: p.sum, Meta: dp.dedupMeta(&p.en.st)})
}

// placeDups shares data for every duplicate, in path order, once the files
// they share with are in place.
func (dp *deduper) placeDups() {
	e := dp.e
	sort.Slice(dp.dups, func(i, j int) bool { return dp.dups[i].rel < dp.dups[j].rel })
	bp := e.buf()
	defer e.putBuf(bp)
	for _, d := range dp.dups {
		if e.ctx.Err() == nil {
			if err := dp.placeDup(d, *bp); err != nil {
				if d.en.group != nil {
					close(d.en.group.done)
				}
				e.fail(d.rel, err)
			}
		} else if d.en.group != nil {
			close(d.en.group.done)
		}
		d.src.release()
		d.dst.release()
		d.stage.settle()
	}
	dp.dups = nil
}

func (dp *deduper) placeDup(d dupFile, buf []byte) error {
	e := dp.e
	var p *pending
	var err error
	for _, t := range dp.ix.Candidates(d.target, dp.dedupMeta(&d.en.st), e.opt.Dedup) {
		alt := d
		alt.target = t
		if p, err = dp.shareData(alt); err != nil {
			return err
		}
		if p != nil {
			break
		}
	}
	if p == nil {
		// Nothing to share safely: an ordinary copy (copyRegular holds its
		// own references to the directories).
		c := &chunk{src: d.src, dst: d.dst}
		if p, err = e.copier.copyRegular(c, &d.en, d.rel, buf, nil); err != nil {
			return err
		}
		if p.size == d.en.st.Size && p.sum == d.sum {
			// Later duplicates with this file's metadata can link to it.
			p.target = &dedup.Target{Rel: d.rel, Sum: d.sum, Size: p.size, Meta: dp.dedupMeta(&p.en.st)}
			dp.ix.Add(p.target)
		}
	} else {
		p.src, p.dst = d.src.retain(), d.dst.retain()
	}
	// A copy is flushed before its read-back and rename, as in a batch. A
	// clone or link writes no data: the blocks it shares were flushed with
	// their first file, and the filesystem's journal orders the clone or link
	// before the rename that follows it, so it needs no flush of its own
	// (which cost 3x the time and bytes on btrfs); the run's final syncfs
	// makes both durable.
	p.placedIn = d.stage // reported once it is published
	if p.action != ActDedupLink && p.action != ActDedupClone {
		if err := e.commit.syncTemp(p); err != nil {
			e.commit.failPending(p, err)
			return nil
		}
	}
	e.commit.commitOne(p, buf)
	return nil
}

// shareData makes the temporary of d share the target's data: a clone where
// the filesystem can (auto, clone), otherwise a hard link when the preserved
// metadata is identical (auto, hardlink). It returns nil, nil when sharing
// is not possible or not safe, and the caller copies.
func (dp *deduper) shareData(d dupFile) (*pending, error) {
	e := dp.e
	found, ok := dp.proof().Prove(d.target, dedup.Dup{Sum: d.sum,
		Own:  func() (fileio.Stat, error) { return d.dst.d.Lstat(d.en.dstName) },
		Open: func() (*fileio.File, error) { return d.src.d.Open(d.en.name, e.opt.Dereference) }})
	if !ok {
		return nil, nil
	}
	defer found.Close()
	tmp := d.en.tempName()
	e.made.Clear(d.dst.d, d.dst.rel, tmp)
	pl := dedup.Place{Found: found, Dir: d.dst.d, DirRel: d.dst.rel, Tmp: tmp, Made: e.made}
	dest := dp.dest()
	if dest.TriesClone() {
		p, err := dp.cloneFrom(pl, d)
		if err == nil || !fileio.IsFallback(err) {
			return p, err
		}
		e.clones.NoteBroken(e.dstDev)
		dest.CannotClone = true
	}
	if ok, note := dest.MayLink(); !ok {
		if note != "" {
			dp.noteDedup(note)
		}
		return nil, nil
	}
	return dp.linkTo(d, pl)
}

// linkTo makes d's temporary a hard link to the target (dedup.Place.Link)
// when the target carries the metadata d's copy would have (the
// filesystem has hard links: dedup.Dest.MayLink); nil, nil when it cannot
// be, and the caller copies.
func (dp *deduper) linkTo(d dupFile, pl dedup.Place) (*pending, error) {
	cur := &pl.Found.Cur
	tmeta := d.target.Meta
	if d.target.External {
		tmeta = dedup.FoundMeta(cur)
	}
	if tmeta != dp.dedupMeta(&d.en.st) || !dp.sameXattrs(d, pl.Found.Dir, pl.Found.Name) {
		return nil, nil // one inode cannot carry two sets of metadata
	}
	ok, note, err := pl.Link()
	if note != "" {
		dp.noteDedup(note)
	}
	if !ok {
		return nil, err
	}
	return &pending{en: d.en, rel: d.rel, tmp: pl.Tmp, sum: d.sum, size: d.en.st.Size, action: ActDedupLink, linkedTo: d.target, ino: devIno{cur.Dev, cur.Ino}}, nil
}

// cloneFrom clones the target into d's temporary (dedup.Place.Clone) and
// gives it the metadata of d's source; it returns nil, nil when the
// target is no longer the file as placed.
func (dp *deduper) cloneFrom(pl dedup.Place, d dupFile) (*pending, error) {
	e := dp.e
	made, ok, err := pl.Clone(func(f *fileio.File) error {
		if err := e.bw.Moved(e.ctx, d.en.st.Size); err != nil {
			return err
		}
		src, err := d.src.d.Open(d.en.name, e.opt.Dereference)
		if err != nil {
			return err
		}
		defer src.Close()
		if err := e.applyMeta(f, src, &d.en.st, born{}, nil); err != nil {
			return err
		}
		if e.opt.Verify == VerifyOff {
			return f.SetTimesAs(pl.Dir, pl.Tmp, d.en.st.Atime, d.en.st.Mtime)
		}
		return nil
	})
	if !ok {
		return nil, err
	}
	return &pending{en: d.en, rel: d.rel, tmp: pl.Tmp, sum: d.sum, size: d.en.st.Size, action: ActDedupClone, ino: devIno{made.Dev, made.Ino}}, nil
}

// sameXattrs compares the extended attributes the copy of d would get with
// those the target carries.
func (dp *deduper) sameXattrs(d dupFile, td *fileio.Dir, tname string) bool {
	root := dp.e.root
	return meta.SameXattrs(d.src.d, d.en.name, dp.e.opt.Dereference, td, tname, func(k string) bool {
		return root || len(k) > 5 && k[:5] == "user."
	})
}

// noteVerify and noteDedup keep the first note of their kind for the
// summary (Summary.VerifyNote, Summary.DedupNote).
func (dp *deduper) noteVerify(msg string) { dp.note(&dp.e.sum.VerifyNote, msg) }
func (dp *deduper) noteDedup(msg string)  { dp.note(&dp.e.sum.DedupNote, msg) }

func (dp *deduper) note(to *string, msg string) {
	dp.e.mu.Lock()
	if *to == "" {
		*to = msg
	}
	dp.e.mu.Unlock()
}

// destContent is where the index learns the files the destination
// already holds, as the hash cache recorded them when they were verified
// (dedup.DestContent): a new file with the same content is cloned or
// linked from there, each confirmed by its stat (and its bytes) before it
// is shared. The index takes them once, when the first file is about to be
// written, so that a rerun that writes nothing does not read the cache's
// whole destination side.
func (dp *deduper) destContent() dedup.DestContent {
	e := dp.e
	if e.cache == nil || e.dstRoot == nil {
		return dedup.DestContent{}
	}
	return dedup.DestContent{Cache: e.cache, Side: e.dstSide, Dev: e.dstDev,
		Volume: e.fs.info.KnownVolume(e.dstDev), Resolution: e.fs.info.KnownResolution(e.dstDev)}
}
