package copyengine

import (
	"errors"
	"fmt"
	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/source"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/verify"
)

// errChanged is the first-attempt form of ErrSourceChanged.
var errChanged = errors.New("source changed while it was read")

// copier is the stage that copies: its workers take the chunks the walker
// sends, write each entry (a regular file under its temporary name, see
// fileCopy), and hand the written files to the committer.
type copier struct {
	e  *engine
	in chan *chunk
}

// worker copies the chunks it takes until the channel is closed.
func (cp *copier) worker() {
	e := cp.e
	bp := e.buf()
	defer e.putBuf(bp)
	for c := range cp.in {
		ahead := 0
		for i := range c.entries {
			if e.ctx.Err() != nil || e.drives.halted() {
				break
			}
			ahead = cp.prefetch(c, i, ahead)
			cp.copyEntry(c, &c.entries[i], *bp)
			cp.closeSrc(&c.entries[i])
			e.passSource(&c.entries[i].st)
		}
		for i := range c.entries { // left by a cancel (opened ahead here, or by the read window)
			cp.closeSrc(&c.entries[i])
		}
		c.src.release()
		c.dst.release()
	}
}

// prefetchAhead is how many entries past the one being copied a worker
// keeps opened and being read into the page cache.
const prefetchAhead = 16

// prefetchMax is the largest file opened ahead: a larger one is read in
// several calls, and the kernel's own readahead keeps ahead of those.
const prefetchMax = 1 << 20

// aheadBudget bounds the descriptors held open ahead of their use, so that
// the look-ahead never takes the descriptors a copy needs: past the budget
// files are simply opened when their turn comes.
type aheadBudget struct {
	max   int64
	n     atomic.Int64
	grown atomic.Bool // the descriptor table was grown for the whole budget
}

// aheadGrow is how many descriptors held ahead make the budget grow the
// process's descriptor table at once to hold all it may take (see
// fileio.ReserveDescriptors): a run that holds a few never pays for it,
// one that holds thousands (--verify=cache and --verify=device hold each
// file read back until it has its name) grows it once instead of doubling
// it seven times, each a wait of every thread that opens a file.
const aheadGrow = 32

// aheadLimit is the budget for a process allowed limit descriptors (0:
// unknown): a quarter of them, at most 4,096.
func aheadLimit(limit int) int64 {
	if limit <= 0 {
		return 1024
	}
	return int64(min(limit/4, 4096))
}

func (b *aheadBudget) take() bool {
	n := b.n.Add(1)
	if n > b.max {
		b.n.Add(-1)
		return false
	}
	if n >= aheadGrow && !b.grown.Load() && b.grown.CompareAndSwap(false, true) {
		// The run's other descriptors (workers' files, directories, the
		// cache) come on top of the budget.
		fileio.ReserveDescriptors(int(b.max) + 256)
	}
	return true
}

func (b *aheadBudget) give() { b.n.Add(-1) }

// prefetch opens the small source files among c's entries from the next
// one not yet looked at (ahead) up to prefetchAhead past entry i, and asks
// the kernel to start reading each (POSIX_FADV_WILLNEED). A cold source of
// small files is otherwise read one device round trip at a time per worker;
// this way a worker's next files are in flight while it copies the current
// one (20,000 files of 4 KiB with cold caches: about half the time). A
// warm file costs one fadvise call. It returns the new ahead.
func (cp *copier) prefetch(c *chunk, i, ahead int) int {
	e := cp.e
	if e.skipWrite() || !fileio.CanPrefetch {
		return ahead
	}
	for ; ahead < len(c.entries) && ahead <= i+prefetchAhead; ahead++ {
		if !cp.openAhead(c.src.d, &c.entries[ahead]) {
			return ahead // no descriptor to spare: this one is opened in turn
		}
	}
	return ahead
}

// openAhead opens en (a small file of sd) and asks the kernel to start
// reading it, unless it reads no data or is open already. It reports
// false when no descriptor is to spare.
func (cp *copier) openAhead(sd *fileio.Dir, en *entry) bool {
	e := cp.e
	if en.src != nil || !en.st.IsRegular() || en.check || en.st.Size == 0 || en.st.Size > prefetchMax {
		return true
	}
	if _, clones := e.cloneWorks.Load(en.st.Dev); clones && !e.opt.needSum() && cp.mayClone(&en.st) {
		return true // a clone that needs no digest reads no data
	}
	if !e.ahead.take() {
		return false
	}
	f, err := sd.Open(en.name, e.opt.Dereference)
	if err != nil {
		e.ahead.give()
		return true // the copy opens it again and reports what it finds
	}
	f.Prefetch(0, en.st.Size)
	en.src = f
	return true
}

// openSrc returns en's source, opened ahead (the entry gives it up) or now.
func (cp *copier) openSrc(sd *fileio.Dir, en *entry) (*fileio.File, error) {
	e := cp.e
	if f := en.src; f != nil {
		en.src = nil
		e.ahead.give()
		return f, nil
	}
	return sd.Open(en.name, e.opt.Dereference)
}

// closeSrc closes a source opened ahead that the copy did not take, once
// the entry is done with, and gives back the read window's room for it
// (see readQueue.dispatch).
func (cp *copier) closeSrc(en *entry) {
	e := cp.e
	if en.src != nil {
		en.src.Close()
		en.src = nil
		e.ahead.give()
	}
	if en.asked != 0 {
		e.walker.reads.copied(en.asked)
		en.asked = 0
	}
}

// copyEntry copies one entry of c; a failure is counted and the run goes on.
func (cp *copier) copyEntry(c *chunk, en *entry, buf []byte) {
	rel := joinRel(c.dstRel(), en.dstName)
	var err error
	switch {
	case cp.e.skipWrite():
		cp.wouldCopy(c, en, rel, buf)
	case en.st.IsRegular():
		cp.copyFile(c, en, rel, buf)
	case en.st.IsSymlink():
		err = cp.copySymlink(c, en, rel)
	default:
		err = cp.copySpecial(c, en, rel)
	}
	if err != nil {
		cp.e.fail(rel, err)
	}
}

// wouldCopy counts and reports an entry a dry run would copy, after the
// checks the real run makes first (see dryrun.go): a file whose size
// matches is read on both sides, and a duplicate shares data.
func (cp *copier) wouldCopy(c *chunk, en *entry, rel string, buf []byte) {
	e := cp.e
	if en.check && e.decide.checkEntry(c, en, rel, buf) {
		return
	}
	if cp.clashes(en, rel) {
		return
	}
	if e.linkDest.place(c, en, rel, buf) || e.decide.wouldLoseSymlink(en, rel) {
		return
	}
	if act, ok := e.dedupe.wouldDedup(c, en, buf); ok {
		if !cp.wouldKeepReplaced(c, en, rel) {
			return
		}
		if en.group != nil {
			en.group.ok = true
			close(en.group.done)
		}
		e.report(&outcome.Outcome{Kind: outcome.Placed, Action: act, Path: rel, Size: en.st.Size})
		cp.wouldRead(en.st.Size)
		e.moves.note(c.src, en, rel, verify.Sum{}) // --move: would be removed
		return
	}
	act := ActCopy
	switch {
	case en.st.IsRegular() && e.dedupe.wouldClone(&en.st):
		act = ActClone
	case en.st.IsSymlink():
		act = ActSymlink
	case !en.st.IsRegular():
		act = ActSpecial
	}
	if !cp.wouldKeepReplaced(c, en, rel) {
		return
	}
	if en.group != nil {
		en.group.ok = true
		close(en.group.done)
	}
	if act == ActCopy || act == ActClone {
		cp.wouldRead(en.st.Size)
	}
	e.report(&outcome.Outcome{Kind: outcome.Placed, Action: act, Path: rel, Size: en.st.Size})
	e.moves.note(c.src, en, rel, verify.Sum{}) // --move: would be removed
}

// copyFile copies a regular file (or finds it equal, or leaves it to the
// placement of duplicates) and hands what it wrote to the committer. A
// failure is counted before the file's staged directory is settled.
func (cp *copier) copyFile(c *chunk, en *entry, rel string, buf []byte) {
	e := cp.e
	var p *pending
	var err error
	if c.stage != nil {
		// A pending file settles its stage when it is released.
		defer func() {
			if p == nil {
				c.stage.settle()
			}
		}()
	}
	if en.check && e.decide.checkEntry(c, en, rel, buf) {
		if en.resume {
			cp.removeKept(c.dst, en.tempName()) // equal after all: a leftover
		}
		return
	}
	if cp.clashes(en, rel) {
		return
	}
	if e.linkDest.place(c, en, rel, buf) {
		return // a hard link to an earlier snapshot's copy (linkdest.go)
	}
	size := en.st.Size
	var pre *preread
	var w dedup.Write
	if e.dedupe.ix != nil && size > 0 {
		var handled bool
		if handled, w, pre = e.dedupe.beginDedup(c, en, rel, buf); handled {
			return
		}
	}
	p, err = cp.copyRegular(c, en, rel, buf, pre)
	if w.Owed() {
		e.dedupe.endDedup(p, size, w)
	}
	if err == nil {
		e.drives.placed() // written whole: both drives answer
		p.stage = c.stage
		if p.resumed > 0 {
			cp.resumedEvent(rel, p.resumed)
		}
		select {
		case e.commit.in <- p:
		case <-e.ctx.Done():
			e.commit.discard(p)
		}
		return
	}
	if en.group != nil {
		close(en.group.done)
	}
	if c.stage != nil {
		e.staged.unwrite(c.stage, c.dst.d, en.dstName) // gone already, unless its removal failed
	}
	e.fail(rel, err)
}

// clashes fails en when its destination entry, held under another
// spelling (en.clash), was not found to hold the source's content: only
// such an entry may be replaced (see respelled).
func (cp *copier) clashes(en *entry, rel string) bool {
	if en.clash == nil || en.equal {
		return false
	}
	if en.group != nil {
		close(en.group.done)
	}
	cp.e.fail(rel, en.clash)
	return true
}

// copySymlink makes a symlink like the source's.
func (cp *copier) copySymlink(c *chunk, en *entry, rel string) error {
	e := cp.e
	if err := cp.keepReplaced(c, en, rel); err != nil {
		return err
	}
	var made error
	err := cp.makeNonRegular(c.src.d, c.dst.d, c.dst.rel, en, func(tmp string) error {
		made = c.dst.d.Symlink(en.target, tmp)
		return made
	})
	if err == nil {
		mv := e.moves.item(c.src, en, rel)
		e.staged.report(c.stage, rel, func() {
			e.mover.Note(mv, verify.Sum{})
			e.report(&outcome.Outcome{Kind: outcome.Placed, Action: ActSymlink, Path: rel})
		})
	} else if made != nil && e.fs.cannotKeep(lostSymlinks, made) {
		e.report(&outcome.Outcome{Kind: outcome.Placed, Action: ActNotKept, Path: rel})
		return nil
	}
	return err
}

// copySpecial makes a FIFO, socket or device like the source's.
func (cp *copier) copySpecial(c *chunk, en *entry, rel string) error {
	e := cp.e
	if err := cp.keepReplaced(c, en, rel); err != nil {
		return err
	}
	err := cp.makeNonRegular(c.src.d, c.dst.d, c.dst.rel, en, func(tmp string) error {
		return c.dst.d.Mknod(tmp, en.st.Mode, en.st.Rdev)
	})
	if err == nil {
		mv := e.moves.item(c.src, en, rel)
		e.staged.report(c.stage, rel, func() {
			e.mover.Note(mv, verify.Sum{})
			e.report(&outcome.Outcome{Kind: outcome.Placed, Action: ActSpecial, Path: rel})
		})
	} else if fileio.IsPermission(err) && !e.root {
		err = fmt.Errorf("creating a %s needs root: %w; run as root or --exclude it", fileio.Describe(en.st.Mode), err)
	}
	return err
}

func (c *chunk) dstRel() string {
	if c.dst == nil {
		return c.src.rel // dry run into a directory not created yet
	}
	return c.dst.rel
}

// makeNonRegular creates a symlink, fifo, socket or device under a
// temporary name with create, gives it the source's owner, extended
// attributes, mode and times, and renames it into place. These hold no
// data, so they need no read-back.
//
// The temporary's name is predictable, so a writer of the destination can
// swap it for a symlink to a file elsewhere, or for a hard link to one. The
// new entry is therefore held by a descriptor (fileio.Node; a symlink's
// opened as the symlink itself) from right after its creation, and its
// metadata is set through that. What is held must be of the source's type
// and have one link: an object made a moment ago by mknod or symlink has
// no other name, while a hard link to something outside the destination
// has two or more. After the rename the final name must lead to the held
// object, still with one link, or the entry fails.
func (cp *copier) makeNonRegular(sd, dd *fileio.Dir, dirRel string, en *entry, create func(tmp string) error) error {
	e := cp.e
	tmp := en.tempName()
	e.clearLeftover(dd, dirRel, tmp)
	e.made.Before(dirRel, tmp, false)
	if err := create(tmp); err != nil {
		e.made.After(dd, dirRel, tmp, nil, err)
		if fileio.IsExist(err) {
			return errNameTaken(tmp, err)
		}
		return err
	}
	e.made.After(dd, dirRel, tmp, nil, nil)
	var n *fileio.Node
	err := func() error {
		var err error
		if en.st.IsSymlink() {
			n, err = dd.OpenSymlinkNode(tmp)
		} else {
			n, err = dd.OpenNode(tmp)
		}
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EINVAL) {
			return errDestReplaced // a symlink where a FIFO was made, or the reverse
		} else if err != nil {
			return err
		}
		if st := n.Stat(); st.Type() != en.st.Type() || st.Nlink != 1 {
			return errDestReplaced
		}
		uid, gid, kept := e.owner(&en.st)
		if uid >= 0 || gid >= 0 {
			if err := n.Chown(uid, gid); err != nil && e.root && !e.fs.cannotKeep(lostOwners, err) {
				return err
			} else if err != nil {
				kept = false
			}
		}
		if err := fileio.CopyXattrsToNode(sd, en.name, n, e.opt.Dereference, e.root); err != nil && !e.fs.cannotKeep(lostXattrs, err) {
			return fmt.Errorf("copying extended attributes: %w", err)
		}
		if !en.st.IsSymlink() {
			if err := n.Chmod(mode(&en.st, kept)); err != nil && !e.fs.cannotKeep(lostModes, err) {
				return err
			}
		}
		if err := n.SetTimes(en.st.Atime, en.st.Mtime); err != nil {
			return err
		}
		if err := dd.Rename(tmp, dd, en.dstName); err != nil {
			return err
		}
		if cur, err := dd.Lstat(en.dstName); err != nil || cur.Dev != n.Stat().Dev || cur.Ino != n.Stat().Ino || cur.Nlink != 1 {
			return errDestReplaced
		}
		return nil
	}()
	if n != nil {
		n.Close()
	}
	if err != nil {
		_ = dd.Remove(tmp)
	}
	return err
}

// copyRegular writes a regular file's data and metadata under its temporary
// name and returns it for the committer. A source that changes while it is
// read is tried once more, then fails with ErrSourceChanged.
func (cp *copier) copyRegular(c *chunk, en *entry, rel string, buf []byte, pre *preread) (*pending, error) {
	e := cp.e
	tmp := en.tempName()
	if c.stage != nil {
		tmp = en.dstName // the whole directory is out of sight
	}
	reads := 0 // read errors so far (see retry.go)
	for attempt := 0; ; attempt++ {
		fc := fileCopy{cp: cp, sd: c.src.d, dd: c.dst.d, dirRel: c.dst.rel, en: en, tmp: tmp, buf: buf, pre: pre}
		p, err := fc.write()
		pre = nil // a second attempt reads afresh
		if err != nil && sourceReadError(err, c.src.d, en.name) {
			reads++
			if reads > cp.retries() || e.drives.judgeDrives(rel, err, false) || !cp.retryWait(reads) {
				return nil, readFailed(err, reads)
			}
			cp.retried(rel, err, reads, cp.retries())
			attempt--
			continue
		}
		if !errors.Is(err, errChanged) {
			if p != nil {
				p.src, p.dst, p.en, p.rel = c.src.retain(), c.dst.retain(), *en, rel
			}
			return p, err
		}
		if attempt == 1 {
			return nil, ErrSourceChanged
		}
		// Let a write that was in flight finish (see settling) before the
		// second look.
		select {
		case <-time.After(settleWindow):
		case <-e.ctx.Done():
			return nil, e.ctx.Err()
		}
		st, serr := cp.restat(c.src.d, en.name)
		if serr != nil {
			return nil, serr
		}
		if st.Type() != en.st.Type() {
			// Replaced by a FIFO or a device, say: copied as a regular
			// file it would read as nothing, or never end.
			return nil, fmt.Errorf("%w: it is now a %s", ErrSourceChanged, fileio.Describe(st.Mode))
		}
		en.st = st
	}
}

func (cp *copier) restat(sd *fileio.Dir, name string) (fileio.Stat, error) {
	e := cp.e
	if e.opt.Dereference {
		return sd.StatFollow(name)
	}
	return sd.Lstat(name)
}

// checkCached is the --verify=cache read-back of a file written by
// read/write, done by the worker right after the write through the
// descriptor it wrote with. Through the page cache the read-back reads the
// pages just written whether it runs now or after the flush, so doing it
// here proves the same and spares the committer an open and a close per
// file. A file that reads back different is left unchecked: the committer
// reads it again after the flush and, if it still differs, copies it once
// more (commitOne).
func (fc *fileCopy) checkCached(p *pending) {
	began := time.Now()
	got, n, err := verify.Stream(fc.dst, p.size, false, fc.buf, fc.cp.e.bw.Sink(fc.cp.e.ctx))
	if err != nil || n != p.size || got != p.sum {
		return
	}
	p.checked, p.readAt = true, began
}

// settleWindow is how recently a source may have changed for its read to be
// trusted. A write moves mtime and ctime when it starts, not when its data is
// in place: a stat taken while a write is copying its data sees the final
// times already, and a read racing that write's data is torn although the
// stat after it matches. So a file whose ctime is within this window of the
// moment its read began is read again after the window.
//
// Where the ctime is coarse the window starts at the end of the ctime's
// tick, not at the ctime: a write in the tick the ctime names leaves it as
// it was, so a read begun in that tick could be torn by a write that no stat
// shows. A read is trusted only if it began at least settleWindow after the
// tick ended; a source whose ctime is more recent is waited for before it is
// read (awaitSettled), which costs only files changed within the last tick
// on a filesystem with coarse times (ext3, ext4 with 128-byte inodes: 1 s;
// FAT: 2 s).
const settleWindow = 50 * time.Millisecond

// farCtime is how far in the future a ctime may be and still be waited for:
// one beyond (a skewed clock) cannot be judged by the window and is left to
// the before/after comparison.
const farCtime = 10 * time.Second

// settledAt is the wall-clock time (ns) from which a read of a source with
// stat st can be trusted, res the resolution of its filesystem's times: the
// end of the tick of its last change plus settleWindow, the tick at least a
// second long for a time without nanoseconds (a filesystem that stores
// whole seconds, which the type's policy cannot tell from a finer one). The
// last change is the ctime, or the mtime where that is later (FAT and
// some FUSE drivers report a creation time as the ctime). 0 for a ctime
// that cannot be judged (see farCtime).
func settledAt(st *fileio.Stat, res int64, now int64) int64 {
	if st.Ctime >= now+int64(farCtime) {
		return 0
	}
	last := st.Ctime
	if st.Mtime > last && st.Mtime < now+int64(farCtime) {
		last = st.Mtime
	}
	r := max(res, 1)
	if last%int64(time.Second) == 0 {
		r = max(r, int64(time.Second))
	}
	return floorDiv(last, r)*r + r + int64(settleWindow)
}

// settling reports whether st changed too shortly before started for a
// read begun then to be trusted (see settleWindow).
func settling(st *fileio.Stat, started time.Time, res int64) bool {
	t := started.UnixNano()
	return t < settledAt(st, res, t)
}

// awaitSettled waits, before a source with stat st is read, until a read
// begun then can be trusted (see settleWindow).
func (cp *copier) awaitSettled(st *fileio.Stat, res int64) error {
	e := cp.e
	now := time.Now().UnixNano()
	wait := time.Duration(settledAt(st, res, now) - now)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
}

// mayClone reports whether the data path would try a clone for st.
func (cp *copier) mayClone(st *fileio.Stat) bool {
	e := cp.e
	if st.Size == 0 || e.opt.Reflink == ReflinkNever || st.Dev != e.dstDev {
		return false
	}
	_, broken := e.noClone.Load(st.Dev)
	return !broken
}

// changed reports whether a file moved between two stats of it.
func changed(before, after *fileio.Stat) bool { return source.Changed(before, after) }

// changedSince reports whether the source en changed between the walk's
// stat of it (en.st) and after, the stat of the descriptor opened later
// and read. It is changed, but for the inode number where the source's
// filesystem keeps none that lasts (en.srcInoLoose: hashcache.Policy's
// CheckInode is false; exfat-fuse and fusefat number an inode afresh
// each time the kernel has forgotten it): the walk's lookup and the open
// are two lookups, and may see two numbers for one file. The size and
// times still tell a file rewritten or replaced meanwhile, and what was
// read is what its digest is of: a --move removes the source only if it
// reads back to that digest (internal/move: the removal rule).
func (en *entry) changedSince(after *fileio.Stat) bool {
	before := en.st
	if en.srcInoLoose {
		before.Ino = after.Ino
	}
	return changed(&before, after)
}

// fileCopy is the copy of one regular file to tmp, its temporary name (or
// its own name in a staged directory): the entry, its source and
// destination, and what the copy found, with the steps as methods.
//
// With pre, the source was already opened and read for its digest (a file
// whose size collides with another's): its descriptor is used, and a file
// that fit in buf is written from there, so its bytes are read once.
type fileCopy struct {
	cp     *copier
	sd, dd *fileio.Dir // the source's and the destination's directories
	dirRel string      // the destination directory's path below the root
	en     *entry
	tmp    string
	buf    []byte
	pre    *preread

	src, dst *fileio.File
	rs       *resumer     // the temporary of an earlier run, taken up
	sc       *streamCheck // a large file's read-back as it is written
	b        born         // what dst was created with
	made     fileio.Stat  // dst, once written
	kept     bool         // dst is held by the pending file (see finish)
	again    bool         // a copy made again after its read-back failed (committer.recopy)

	act     Action
	sum     verify.Sum // of the source
	n       int64      // bytes copied
	hashed  bool       // sum was computed from the source's bytes
	started time.Time  // when the source's read began
}

// write copies the file and returns it as pending.
func (fc *fileCopy) write() (_ *pending, err error) {
	if err := fc.openSource(); err != nil {
		return nil, err
	}
	defer fc.src.Close()
	if err := fc.create(); err != nil {
		return nil, err
	}
	defer func() {
		if !fc.kept {
			fc.dst.Close()
		}
		if err != nil && !fc.cp.keepsTemp(fc.en, fc.tmp) {
			_ = fc.dd.Remove(fc.tmp)
		}
	}()
	fc.sc = fc.cp.newStreamCheck(fc.dd, fc.tmp, fc.dst, &fc.en.st)
	defer fc.sc.close()
	if err := fc.transfer(); err != nil {
		return nil, err
	}
	return fc.finish()
}

// openSource takes the source opened ahead, or waits until it can be read
// (awaitSettled) and opens it.
func (fc *fileCopy) openSource() (err error) {
	if fc.pre != nil {
		fc.src = fc.pre.f
		return nil
	}
	if err = fc.cp.awaitSettled(&fc.en.st, fc.en.srcRes); err != nil {
		return err
	}
	fc.src, err = fc.cp.openSrc(fc.sd, fc.en)
	return err
}

// create opens the temporary: one an earlier run kept, to take up, or a
// new one, in place of a leftover of an interrupted run.
func (fc *fileCopy) create() (err error) {
	e, dd, tmp := fc.cp.e, fc.dd, fc.tmp
	var perm uint32
	perm, fc.b = e.createMode(dd, &fc.en.st)
	if fc.en.resume && fc.cp.resumable(&fc.en.st) {
		if fc.rs = fc.cp.openResume(dd, tmp, &fc.en.st); fc.rs != nil {
			fc.dst, fc.b = fc.rs.f, born{} // its owner and mode are set afresh
			return nil
		}
	}
	recorded := tmp != fc.en.dstName // in a staged directory, the stage is recorded
	if recorded {
		e.made.Before(fc.dirRel, tmp, false)
		defer func() {
			var st *fileio.Stat
			if err == nil {
				if cur, serr := fc.dst.Stat(); serr == nil {
					st = &cur
				}
			}
			e.made.After(dd, fc.dirRel, tmp, st, err)
		}()
	}
	fc.dst, err = fileio.CreateTempMode(dd, tmp, perm)
	if fileio.IsExist(err) {
		if !e.ownLeftover(dd, fc.dirRel, tmp, fileio.ModeRegular) {
			return errNameTaken(tmp, err)
		}
		// A leftover of an interrupted run.
		if rerr := dd.Remove(tmp); rerr != nil && !fileio.IsNotExist(rerr) {
			return fmt.Errorf("a leftover temporary of an earlier run cannot be removed (%w); if it is immutable or append-only (lsattr), remove it with chattr -i -a and rm", rerr)
		}
		fc.dst, err = fileio.CreateTempMode(dd, tmp, perm)
	}
	return err
}

// transfer writes the data, and checks that the source held still while
// it was read.
func (fc *fileCopy) transfer() error {
	e, st := fc.cp.e, &fc.en.st
	fc.started = time.Now()
	fc.hashed = true
	if pre := fc.pre; pre != nil && pre.whole && !fc.cp.mayClone(st) {
		// Read (and counted), hashed and found stable already: write what
		// is in buf.
		fc.act, fc.sum, fc.n, fc.started = ActCopy, pre.sum, pre.n, pre.started
		if err := fc.dst.WriteAt(fc.buf[:fc.n], 0); err != nil {
			return err
		}
		return e.bw.Charge(e.ctx, throttle.Write, fc.n)
	}
	if err := fc.copyData(); err != nil {
		return err
	}
	if fc.hashed {
		e.stats.BytesRead.Add(fc.n) // copy_file_range and an unhashed clone read nothing here
	}
	after, err := fc.src.Stat()
	if err != nil {
		return err
	}
	if fc.en.changedSince(&after) || (st.Size != 0 && fc.n != st.Size) || settling(&after, fc.started, fc.en.srcRes) {
		return errChanged
	}
	return nil
}

// finish records the source's digest, checks the written file where that
// is done by the worker, gives it the source's metadata and returns it as
// pending.
func (fc *fileCopy) finish() (*pending, error) {
	e, en, dst := fc.cp.e, fc.en, fc.dst
	if fc.hashed {
		e.record.rememberSource(en.srcKey, &en.st, fc.sum, en.extra, fc.started)
	}
	p := &pending{tmp: fc.tmp, sum: fc.sum, size: fc.n, action: fc.act, resumed: fc.rs.resumedAt()}
	cached := fc.act == ActCopy && fc.hashed && fc.sc == nil && e.opt.Verify == VerifyCache
	if cached {
		fc.checkCached(p)
	}
	// The inode written, for the checks of its identity, is taken only
	// now that it has been written and read: a stat asks for the file's
	// change time, and on Linux 6.13 and later (multigrain timestamps) the
	// next write or read of a file whose change time was asked for moves
	// its times at a finer grain, which dirties its inode once more: on
	// ext4, one more journal handle per file (20,000 more for 20,000 files,
	// counted with the ext4_mark_inode_dirty tracepoint). Its device, inode
	// number and mode do not change with the writes.
	var err error
	if fc.made, err = dst.Stat(); err != nil {
		return nil, err
	}
	p.ino = devIno{fc.made.Dev, fc.made.Ino}
	if !cached && fc.act == ActCopy && fc.hashed && fc.sc.finish(fc.n, fc.sum) && fc.sc.readInode(&fc.made) {
		p.checked, p.readAt = true, fc.sc.began
	}
	if err := e.applyMeta(dst, fc.src, &en.st, fc.b, &fc.made); err != nil {
		return nil, err
	}
	if e.opt.Verify == VerifyOff {
		if err := dst.SetTimesAs(fc.dd, fc.tmp, en.st.Atime, en.st.Mtime); err != nil {
			return nil, err
		}
		e.keepBtime(fc.dd, fc.tmp, &en.st)
	}
	if p.checked {
		// The committer needs the inode that was read back: dst is it. A
		// file that cannot hold it open (too many descriptors held already)
		// is read back again by the committer instead.
		if e.ahead.take() {
			p.hold(dst, &e.ahead)
			fc.kept = true
			e.stats.BytesVerified.Add(fc.n)
			e.stats.BytesRead.Add(fc.n)
		} else {
			p.checked = false
		}
	}
	if !fc.kept {
		// Asked only now: holdWritten takes a descriptor of the budget,
		// which a file held already (p.hold above) must not take again.
		if hold, of := fc.holdWritten(); hold {
			p.written, p.writtenOf = dst, of
			fc.kept = true
		}
	}
	if fc.act == ActCopy {
		e.stats.BytesWritten.Add(fc.n - p.resumed)
	}
	return p, nil
}

// holdWritten reports whether the temporary's descriptor is kept open in
// the pending file until its read-back has opened it again, and what
// budget it counts against. Where the destination's filesystem may number
// an inode afresh each time the kernel has forgotten it (hashcache.Policy's
// CheckInode is false: exfat-fuse and fusefat on libfuse's high-level API,
// the kernel's FAT and exFAT), a temporary closed after its write may have
// another number by the time its read-back opens it, and would fail as
// replaced by another file; one that is open the kernel cannot forget.
// The inode read back is held on from there (pending.held) until it has
// its name. A first copy is held within the budget of descriptors held
// ahead; past it the identity is compared as elsewhere, and a renumbered
// temporary is copied once more (committer.recopy), which holds its one
// file whatever the budget: a renumbering costs a write, never a failure,
// and a temporary really replaced still fails.
func (fc *fileCopy) holdWritten() (bool, *aheadBudget) {
	e := fc.cp.e
	if e.opt.Verify == VerifyOff || e.dstSide.Policy.CheckInode {
		return false, nil
	}
	if fc.again {
		return true, nil
	}
	if !e.ahead.take() {
		return false, nil
	}
	return true, &e.ahead
}

// copyData moves the bytes of src into dst by the first primitive of the
// ladder that works: FICLONE (same filesystem, --reflink auto or always),
// copy_file_range (same filesystem, only when no digest is needed and cloning
// is known not to work there, so it cannot silently clone, and not for a
// large file that is flushed as it is written), then read/write
// with the digest computed as the data streams (and, for a large file, its
// flush and read-back started as it is written: see streamCheck). It
// sets the action, the source digest and the length.
func (fc *fileCopy) copyData() error {
	e, st := fc.cp.e, &fc.en.st
	sameDev := st.Dev == e.dstDev
	if st.Size > 0 && e.opt.Reflink != ReflinkNever {
		if done, err := fc.clone(sameDev); done || err != nil {
			return err
		}
	}
	if st.Size > 0 && sameDev && !e.opt.needSum() && e.opt.Reflink == ReflinkAuto && !st.Sparse() && fc.sc == nil && e.opt.share == nil {
		if done, err := fc.copyRange(); done || err != nil {
			return err
		}
	}
	return fc.stream()
}

// clone tries FICLONE; done is false when the copy is left to the next
// primitive.
func (fc *fileCopy) clone(sameDev bool) (done bool, err error) {
	e, st := fc.cp.e, &fc.en.st
	if _, broken := e.noClone.Load(st.Dev); !sameDev || broken {
		if e.opt.Reflink == ReflinkAlways {
			return false, fmt.Errorf("--reflink=always: cannot clone here (different filesystems or no reflink support); use --reflink=auto")
		}
		return false, nil
	}
	err = fc.dst.Clone(fc.src)
	if err == nil {
		e.cloneWorks.Store(st.Dev, true)
		if err := e.bw.Moved(e.ctx, st.Size); err != nil {
			return true, err
		}
		fc.act, fc.sum, fc.n, fc.hashed = ActClone, verify.Sum{}, st.Size, e.opt.needSum()
		if e.opt.needSum() {
			// The clone moved no data through us: read the source once
			// for its digest, which the read-back is checked against.
			if fc.sum, fc.n, err = e.records.stream(fc.en, e.source(fc.src, st), st.Size, fc.buf, e.bw.Sink(e.ctx)); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if e.opt.Reflink == ReflinkAlways {
		return false, fmt.Errorf("--reflink=always: %w", err)
	}
	if !fileio.IsFallback(err) {
		return false, err
	}
	// EINVAL is about this pair of files (a NOCOW file on btrfs,
	// say), not the filesystem: the next file may still clone.
	if !errors.Is(err, syscall.EINVAL) {
		e.noClone.Store(st.Dev, true)
	}
	return false, nil
}

// copyRange tries copy_file_range where cloning is known not to work.
func (fc *fileCopy) copyRange() (done bool, err error) {
	e, st := fc.cp.e, &fc.en.st
	if _, broken := e.noClone.Load(st.Dev); !broken {
		return false, nil
	}
	n, err := fc.copyRangePieces()
	if err == nil {
		fc.act, fc.sum, fc.n, fc.hashed = ActCopy, verify.Sum{}, n, false // no digest: not needed
		return true, nil
	}
	if !fileio.IsFallback(err) || n > 0 {
		return false, err
	}
	return false, nil
}

// stream reads once, hashes and writes as the data streams. A sparse
// source's holes stay holes: the destination is sized first and only data
// is written.
func (fc *fileCopy) stream() (err error) {
	e, st := fc.cp.e, &fc.en.st
	dst, rs, sc := fc.dst, fc.rs, fc.sc
	sparse := st.Sparse()
	if sparse {
		if err := dst.Truncate(st.Size); err != nil {
			if !fileio.IsPermission(err) && !fileio.IsFallback(err) {
				return err
			}
			// fusefat cannot extend a file by truncate (EPERM): the
			// holes are written out as zeros instead.
			sparse = false
		}
	}
	fc.act, fc.hashed = ActCopy, true
	var write verify.Sink = func(p []byte, off int64) error {
		if rs.same(e, p, off) {
			sc.wrote(off + int64(len(p))) // read back with the rest
			return nil
		}
		if err := dst.WriteAt(p, off); err != nil {
			return err
		}
		if err := e.bw.Charge(e.ctx, throttle.Write, int64(len(p))); err != nil {
			return err
		}
		sc.wrote(off + int64(len(p)))
		return nil
	}
	if sparse {
		write = verify.SkipZeros(write) // holes stay holes
	}
	// Every byte read is charged to --bwlimit, zeros too: Stream is told
	// the file is not sparse, and the sink leaves them out.
	charge := e.bw.Sink(e.ctx)
	fc.sum, fc.n, err = e.records.stream(fc.en, e.source(fc.src, st), st.Size, fc.buf, func(p []byte, off int64) error {
		if err := charge(p, off); err != nil {
			return err // a cancel stops a large file mid-way, not after it
		}
		return write(p, off)
	})
	return err
}

// ctxSink is a verify.Sink that only stops a read once the run is
// cancelled, so that hashing a large file does not hold up the cancel.
func (e *engine) ctxSink([]byte, int64) error { return e.ctx.Err() }
