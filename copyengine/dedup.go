package copyengine

import (
	"bytes"
	"errors"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/meta"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/internal/transfer"
	"github.com/fastcopy/fastcopy/verify"
)

// deduper is the stage that places duplicates: it indexes the files the
// run writes by content, and once the committer is done it gives each
// duplicate the data of the file it duplicates (a clone or a hard link).
type deduper struct {
	e           *engine
	ix          *dedup.Index // nil with --dedup=off
	dups        []dupFile    // duplicates waiting to share a placed file's data (under e.mu)
	destTargets sync.Once    // loadDestTargets, before the first file is written
	// followers are the further names of source inodes, linked to the
	// first name once it is placed (addFollower; under mu).
	followers []linkFollower
	mu        sync.Mutex
	dry       dryDedup // a dry run's index (dryrun.go)
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
func (dp *deduper) beginDedup(c *chunk, en *entry, rel string, buf []byte) (handled bool, w dedupWrite, pre *preread) {
	e := dp.e
	size := en.st.Size
	dp.destTargets.Do(dp.loadDestTargets)
	if !dp.ix.Begin(size, dp.targetGone) {
		return false, dedupWrite{begun: true}, nil
	}
	pre, err := dp.readSource(c.src.d, en, buf)
	if err != nil {
		return false, dedupWrite{}, nil // copied without dedup; the copy reports a real error
	}
	e.record.Source(en.srcKey, &en.st, pre.sum, en.extra, pre.started)
	t, mine := dp.ix.Find(rel, size, pre.sum, dp.dedupMeta(&en.st), dp.linkOnly)
	if mine {
		return false, dedupWrite{claimed: t}, pre
	}
	sum := pre.sum
	pre.f.Close()
	e.mu.Lock()
	if c.stage != nil {
		c.stage.add() // settled by placeDups
	}
	dp.dups = append(dp.dups, dupFile{src: c.src.retain(), dst: c.dst.retain(), en: *en, rel: rel, sum: sum, target: t, stage: c.stage})
	e.mu.Unlock()
	return true, dedupWrite{}, nil
}

// targetGone reports whether a file the cache says the destination holds is
// missing or changed since (see dedup.Index.Begin).
func (dp *deduper) targetGone(t *dedup.Target) bool {
	td, _, _, ok := dp.openTarget(t)
	if ok {
		td.Close()
	}
	return !ok
}

// openTarget opens the directory of a target and stats it there. It
// reports false, having closed what it opened, unless the target is in
// place exactly as it was when its read-back matched: stale content is
// never shared.
func (dp *deduper) openTarget(t *dedup.Target) (td *fileio.Dir, name string, cur fileio.Stat, ok bool) {
	e := dp.e
	placed, ok := t.InPlace()
	if !ok {
		return nil, "", cur, false
	}
	tdir, name := splitRel(t.Rel)
	td, err := e.staged.openDst(tdir)
	if err != nil {
		return nil, "", cur, false
	}
	if cur, err = td.Lstat(name); err != nil || !stillPlaced(&cur, placed) {
		td.Close()
		return nil, "", cur, false
	}
	return td, name, cur, true
}

// stillPlaced reports whether cur is the file as it was placed and verified.
func stillPlaced(cur *fileio.Stat, placed dedup.Placed) bool {
	return cur.Dev == placed.Dev && cur.Ino == placed.Ino && cur.Size == placed.Size &&
		cur.Mtime == placed.Mtime && cur.Ctime == placed.Ctime
}

// linkOnly reports whether duplicates can only be hard-linked here (so a
// target is of use only with the same metadata): --dedup=hardlink, or
// --dedup=auto where cloning is off or known not to work. A duplicate
// matched to a target it cannot share with would wait for the end of the
// run and be copied then, one file and one flush at a time.
func (dp *deduper) linkOnly() bool {
	e := dp.e
	if e.opt.Dedup == dedup.Hardlink {
		return true
	}
	if e.opt.Dedup != dedup.Auto {
		return false
	}
	return e.clones.Broken(e.dstDev) || e.opt.Reflink == ReflinkNever
}

// preread is a source opened and read for its digest before the decision
// to write it.
type preread struct {
	f       *fileio.File
	sum     verify.Sum
	n       int64
	whole   bool // all n bytes are still in the buffer it was read with
	started time.Time
}

// hashSource reads a source file for its digest, failing if it moved.
func (dp *deduper) hashSource(sd *fileio.Dir, en *entry, buf []byte) (verify.Sum, error) {
	pre, err := dp.readSource(sd, en, buf)
	if err != nil {
		return verify.Sum{}, err
	}
	pre.f.Close()
	return pre.sum, nil
}

// readSource opens and reads a source for its digest, failing if it moved
// meanwhile, and returns it still open.
func (dp *deduper) readSource(sd *fileio.Dir, en *entry, buf []byte) (_ *preread, err error) {
	e := dp.e
	if err := transfer.AwaitSettled(e.ctx, &en.st, en.srcRes); err != nil {
		return nil, err
	}
	started := time.Now()
	f, err := e.copier.openSrc(sd, en)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	sum, n, err := e.records.stream(en, e.source(f, &en.st), en.st.Size, buf, e.bw.Sink(e.ctx))
	if err != nil {
		return nil, err
	}
	e.stats.BytesRead.Add(n)
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if transfer.ChangedSince(en.st, en.srcInoLoose, &after) || n != en.st.Size || transfer.Settling(&after, started, en.srcRes) {
		return nil, errChanged
	}
	whole := !en.st.Sparse() && n > 0 && n <= int64(len(buf))
	return &preread{f: f, sum: sum, n: n, whole: whole, started: started}, nil
}

// endDedup registers a written file as a target for later ones, or gives
// up its place when it was not written.
func (dp *deduper) endDedup(p *pending, size int64, w dedupWrite) {
	switch {
	case w.claimed != nil && p != nil && p.size == size && p.sum == w.claimed.Sum:
		p.target = w.claimed
	case w.claimed != nil:
		dp.ix.Drop(w.claimed) // not written, or not with the digest it was found by
	case p == nil || p.size != size:
		dp.ix.Abandon(size)
	default:
		p.target = dp.ix.Register(p.rel, size, p.sum, dp.dedupMeta(&p.en.st))
	}
}

// dedupWrite is what a file written under dedup owes the index when its
// copy ends: a Register or Abandon after Begin (begun), or the target Find
// made for it (claimed).
type dedupWrite struct {
	begun   bool
	claimed *dedup.Target
}

func (w dedupWrite) owed() bool { return w.begun || w.claimed != nil }

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
	p, err := dp.shareData(d)
	if err != nil {
		return err
	}
	if p == nil && e.opt.Dedup != dedup.Clone {
		// The target could not take this file as a hard link (other
		// metadata, or out of links): another copy of the content with this
		// file's metadata may.
		for _, t := range dp.ix.Others(d.target, dp.dedupMeta(&d.en.st)) {
			alt := d
			alt.target = t
			if p, err = dp.shareData(alt); err != nil {
				return err
			}
			if p != nil {
				break
			}
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
	// The read-back of the new name checks the content again.
	td, tname, cur, ok := dp.openTarget(d.target)
	if !ok {
		return nil, nil
	}
	defer td.Close()
	// A target that already is this name (or a link of it, as after an
	// earlier dedup and now --force) cannot be shared: renaming a link
	// onto the same inode does nothing, and would leave the temporary.
	if own, err := d.dst.d.Lstat(d.en.dstName); err == nil && own.Dev == cur.Dev && own.Ino == cur.Ino {
		return nil, nil
	}
	if e.opt.DedupVerifyBytes {
		if same, err := dp.sameBytes(d, td, tname); err != nil || !same {
			return nil, nil
		}
	}
	// Content this run did not itself write and verify (a file from before
	// the run, or any file under --verify=off) is read again first, through
	// the descriptor a clone is then made from: its cache entry or its
	// placement vouches for its stat, not for the bytes on the device.
	var tf *fileio.File
	if d.target.External || e.opt.Verify == VerifyOff {
		var err error
		if tf, err = td.Open(tname, false); err != nil {
			return nil, nil
		}
		defer tf.Close()
		if !dp.rehashTarget(tf, &cur, d.sum, d.target.External) {
			return nil, nil
		}
	}
	dd := d.dst.d
	tmp := d.en.tempName()
	e.clearLeftover(dd, d.dst.rel, tmp)
	cloneBroken := e.clones.Broken(e.dstDev)
	if e.opt.Dedup != dedup.Hardlink && e.opt.Reflink != ReflinkNever && !cloneBroken {
		p, err := dp.cloneFrom(td, tname, tf, &cur, dd, tmp, d)
		if err == nil || !fileio.IsFallback(err) {
			return p, err
		}
		e.clones.NoteBroken(e.dstDev)
		cloneBroken = true
	}
	if e.opt.Dedup == dedup.Clone && cloneBroken {
		// Never a hard link under --dedup=clone, also when an earlier file
		// found that this filesystem cannot clone.
		dp.noteDedup("the destination filesystem cannot clone; duplicates were copied")
		return nil, nil
	}
	return dp.linkTo(d, td, tname, &cur, tmp)
}

// linkTo makes tmp, in d's destination directory, a hard link to the
// target (tname in td, found as cur) when the filesystem has hard links
// and the target carries the metadata d's copy would have; nil, nil when
// it cannot be, and the caller copies.
func (dp *deduper) linkTo(d dupFile, td *fileio.Dir, tname string, cur *fileio.Stat, tmp string) (*pending, error) {
	e := dp.e
	dd := d.dst.d
	if !e.fs.hasLinks() {
		// No hard links here (exFAT, FAT).
		if e.opt.Dedup == dedup.Hardlink {
			dp.noteDedup("the destination filesystem has no hard links; duplicates were copied")
		}
		return nil, nil
	}
	tmeta := d.target.Meta
	if d.target.External {
		tmeta = dedup.Meta{Mode: cur.Mode & 0o7777, Uid: cur.Uid, Gid: cur.Gid, Mtime: cur.Mtime}
	}
	if tmeta != dp.dedupMeta(&d.en.st) || !dp.sameXattrs(d, td, tname) {
		return nil, nil // one inode cannot carry two sets of metadata
	}
	// linkat names the target: the new name must be the inode checked.
	e.made.Before(d.dst.rel, tmp, false)
	err := linkChecked(dd, tmp, td, tname, devIno{cur.Dev, cur.Ino})
	e.made.After(dd, d.dst.rel, tmp, nil, err)
	if errors.Is(err, errLinkReplaced) {
		return nil, nil // copied instead
	} else if err != nil {
		if fileio.IsFallback(err) || fileio.IsPermission(err) || errors.Is(err, syscall.EMLINK) {
			dp.noteDedup("hard links are not possible for some files here (" + ErrText(err) + "); those were copied")
			return nil, nil
		}
		return nil, err
	}
	return &pending{en: d.en, rel: d.rel, tmp: tmp, sum: d.sum, size: d.en.st.Size, action: ActDedupLink, linkedTo: d.target, ino: devIno{cur.Dev, cur.Ino}}, nil
}

// cloneFrom clones the target into tmp: from tf when the caller opened
// (and re-read) it already, otherwise from the target opened here, which
// must be the file as placed (cur); it returns nil, nil when it is not.
func (dp *deduper) cloneFrom(td *fileio.Dir, tname string, tf *fileio.File, cur *fileio.Stat, dd *fileio.Dir, tmp string, d dupFile) (_ *pending, err error) {
	e := dp.e
	if tf == nil {
		if tf, err = td.Open(tname, false); err != nil {
			return nil, err
		}
		defer tf.Close()
		if st, err := tf.Stat(); err != nil || changed(cur, &st) {
			return nil, nil // replaced since its check: copied instead
		}
	}
	dp.e.made.Before(d.dst.rel, tmp, false)
	f, err := fileio.CreateTemp(dd, tmp)
	if err != nil {
		dp.e.made.After(dd, d.dst.rel, tmp, nil, err)
		return nil, err
	}
	if st, serr := f.Stat(); serr == nil {
		dp.e.made.After(dd, d.dst.rel, tmp, &st, nil)
	}
	defer func() {
		f.Close()
		if err != nil {
			_ = dd.Remove(tmp)
		}
	}()
	made, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err = f.Clone(tf); err != nil {
		return nil, err
	}
	if err = e.bw.Moved(e.ctx, d.en.st.Size); err != nil {
		return nil, err
	}
	src, err := d.src.d.Open(d.en.name, e.opt.Dereference)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if err = e.applyMeta(f, src, &d.en.st, born{}, nil); err != nil {
		return nil, err
	}
	if e.opt.Verify == VerifyOff {
		if err = f.SetTimesAs(dd, tmp, d.en.st.Atime, d.en.st.Mtime); err != nil {
			return nil, err
		}
	}
	return &pending{en: d.en, rel: d.rel, tmp: tmp, sum: d.sum, size: d.en.st.Size, action: ActDedupClone, ino: devIno{made.Dev, made.Ino}}, nil
}

// rehashTarget reads a dedup target afresh through tf and reports whether
// it is still the file as placed (cur) and holds sum. A file from before
// the run (external) is read past its cached pages where the platform
// can, so that what was cached before it rotted on the device cannot
// vouch for it.
func (dp *deduper) rehashTarget(tf *fileio.File, cur *fileio.Stat, sum verify.Sum, external bool) bool {
	e := dp.e
	if external {
		_ = tf.DropCache()
	}
	before, err := tf.Stat()
	if err != nil || changed(cur, &before) {
		return false
	}
	buf := e.buf()
	defer e.putBuf(buf)
	got, n, err := verify.Stream(tf, before.Size, false, *buf, e.bw.Sink(e.ctx))
	e.stats.BytesRead.Add(n)
	if err != nil || n != before.Size || got != sum {
		return false
	}
	after, err := tf.Stat()
	return err == nil && !changed(&before, &after)
}

// sameXattrs compares the extended attributes the copy of d would get with
// those the target carries.
func (dp *deduper) sameXattrs(d dupFile, td *fileio.Dir, tname string) bool {
	root := dp.e.root
	return meta.SameXattrs(d.src.d, d.en.name, dp.e.opt.Dereference, td, tname, func(k string) bool {
		return root || len(k) > 5 && k[:5] == "user."
	})
}

func (dp *deduper) noteVerify(msg string) {
	e := dp.e
	e.mu.Lock()
	if e.sum.VerifyNote == "" {
		e.sum.VerifyNote = msg
	}
	e.mu.Unlock()
}

func (dp *deduper) noteDedup(msg string) {
	e := dp.e
	e.mu.Lock()
	if e.sum.DedupNote == "" {
		e.sum.DedupNote = msg
	}
	e.mu.Unlock()
}

// destDedupMin is the smallest file the destination's earlier content is
// offered for: below it, the saving is less than the bookkeeping.
const destDedupMin = 4096

// loadDestTargets offers the files the destination already holds, as the
// hash cache recorded them when they were verified, as dedup targets: a new
// file with the same content is cloned or linked from there. Each is
// confirmed by its stat (and its bytes) before it is shared. It runs once,
// when the first file is about to be written, so that a rerun that writes
// nothing does not read the cache's whole destination side.
func (dp *deduper) loadDestTargets() {
	if dp.ix != nil {
		dp.destContent(dp.ix.Add)
	}
}

// destContent hands add each file the destination holds as the hash
// cache recorded it (see loadDestTargets).
func (dp *deduper) destContent(add func(*dedup.Target)) {
	e := dp.e
	if e.cache == nil || e.dstRoot == nil || !e.dstSide.Policy.CheckInode {
		return
	}
	prefix := e.dstSide.Abs + string(filepath.Separator)
	vol := e.fs.knownVolume(e.dstDev)
	if vol == 0 {
		return // no volume identity: an entry could describe another volume's file
	}
	pol := e.dstSide.Policy
	pol.MtimeGranularity = max(pol.MtimeGranularity, time.Duration(e.fs.knownResolution(e.dstDev)))
	e.cache.Range(prefix, func(p string, ce hashcache.Entry) bool {
		if ce.Volume != vol || ce.Size < destDedupMin || ce.Racy(pol) {
			return true
		}
		t := &dedup.Target{Rel: filepath.ToSlash(p[len(prefix):]), Sum: ce.Sum, Size: ce.Size, External: true}
		t.Done(true, dedup.Placed{Dev: e.dstDev, Ino: ce.Ino, Size: ce.Size, Mtime: ce.Mtime, Ctime: ce.Ctime})
		add(t)
		return e.ctx.Err() == nil
	})
}

// sameBytes compares the duplicate's source with the target byte for byte
// (--dedup-verify=bytes): equal digests are then not taken on trust.
func (dp *deduper) sameBytes(d dupFile, td *fileio.Dir, tname string) (bool, error) {
	e := dp.e
	a, err := d.src.d.Open(d.en.name, e.opt.Dereference)
	if err != nil {
		return false, err
	}
	defer a.Close()
	b, err := td.Open(tname, false)
	if err != nil {
		return false, err
	}
	defer b.Close()
	ba, bb := e.buf(), e.buf()
	defer e.putBuf(ba)
	defer e.putBuf(bb)
	for off := int64(0); ; {
		n, err := a.ReadFull(*ba, off)
		if err != nil {
			return false, err
		}
		m, err := b.ReadFull((*bb)[:len(*ba)], off)
		if err != nil {
			return false, err
		}
		if err := e.bw.Charge(e.ctx, throttle.Read, int64(n+m)); err != nil {
			return false, err
		}
		if n != m || !bytes.Equal((*ba)[:n], (*bb)[:m]) {
			return false, nil
		}
		e.stats.BytesRead.Add(int64(n + m))
		if n < len(*ba) {
			return true, nil
		}
		off += int64(n)
	}
}
