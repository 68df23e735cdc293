package copyengine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/durable"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/retry"
	"github.com/fastcopy/fastcopy/internal/transfer"
	"github.com/fastcopy/fastcopy/verify"
)

// errChanged is the first-attempt form of ErrSourceChanged
// (transfer.ErrChanged).
var errChanged = transfer.ErrChanged

// copier is the stage that copies: its workers take the chunks the walker
// sends, write each entry (a regular file under its temporary name, see
// fileCopy), and hand the written files to the committer.
type copier struct {
	e  *engine
	in chan *chunk

	cfgOnce sync.Once
	cfg     transfer.Config // the input of its transfers (config)
}

// worker copies the chunks it takes until the channel is closed.
func (cp *copier) worker() {
	e := cp.e
	bp := e.buf()
	defer e.putBuf(bp)
	for c := range cp.in {
		ahead := 0
		for i := range c.entries {
			if e.ctx.Err() != nil || e.drives.Halted() {
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
	if cp.config().ReadsNothing(&en.st) {
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
	if en.check && cp.carryCheck(c, en, rel, buf) {
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
	if en.check && cp.carryCheck(c, en, rel, buf) {
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
		e.drives.Placed() // written whole: both drives answer
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
	} else if made != nil && e.fs.info.CannotKeep(lostSymlinks, made) {
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

// makeNonRegular makes en, a symlink, fifo, socket or device, with create
// under a temporary name, and gives it its source's metadata before it
// takes its name (transfer.Config.MakeSpecial).
func (cp *copier) makeNonRegular(sd, dd *fileio.Dir, dirRel string, en *entry, create func(tmp string) error) error {
	return cp.config().MakeSpecial(&transfer.Special{SrcDir: sd, Name: en.name, Stat: en.st, Dir: dd, DirRel: dirRel,
		Tmp: en.tempName(), DstName: en.dstName, Create: create})
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
	reads, rp := 0, retry.New(retry.Config{Retries: e.opt.Retries}) // read errors so far, and the rule for reading again
	for attempt := 0; ; attempt++ {
		fc := fileCopy{cp: cp, sd: c.src.d, dd: c.dst.d, dirRel: c.dst.rel, en: en, tmp: tmp, buf: buf, pre: pre}
		p, err := fc.write()
		pre = nil // a second attempt reads afresh
		if err != nil && retry.SourceReadError(err, c.src.d.Path(), en.name) {
			reads++
			if reads > rp.Retries() || e.drives.judgeDrives(rel, err, false) || !rp.Wait(e.ctx, reads) {
				return nil, retry.Failed(err, reads)
			}
			cp.retried(rel, rp.Again(err, reads))
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
		// Let a write that was in flight finish before the second look.
		st, err := transfer.Again(e.ctx, c.src.d, en.name, e.opt.Dereference, &en.st)
		if err != nil {
			return nil, err
		}
		en.st = st
	}
}

// config is the input of this run's transfers, built once the destination
// is open (its device, the record of what runs made there).
func (cp *copier) config() *transfer.Config {
	cp.cfgOnce.Do(func() { cp.cfg = cp.e.transferConfig() })
	return &cp.cfg
}

// transferConfig is what the engine knows that a file's transfer depends on.
func (e *engine) transferConfig() transfer.Config {
	return transfer.Config{
		Ctx:         e.ctx,
		NoReflink:   e.opt.Reflink == ReflinkNever,
		ReflinkOnly: e.opt.Reflink == ReflinkAlways,
		Verify:      e.opt.Verify,
		NeedSum:     e.opt.needSum(),
		Shared:      e.opt.share != nil,
		Deref:       e.opt.Dereference,
		DstDev:      e.dstDev,
		Clones:      &e.clones,
		Resume:      e.copier.resume(),
		Euid:        e.euid,
		InodesLast:  e.dstSide.Policy.CheckInode,
		Meter:       e.bw,
		Stats:       e.stats,
		Meta:        e.metaConfig(),
		Made:        e.made,
		Source:      e.source,
		Hash:        e.records.Hashes.Stream,
		KeepBtime:   e.keepBtime,
		TakeHeld:    e.ahead.take,
	}
}

// fileCopy is the copy of one regular file to tmp, its temporary name (or
// its own name in a staged directory): the entry, its source and
// destination, handed to a transfer.Transfer, whose answer it turns into
// the pending file the committer takes.
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
	again  bool // a copy made again after its read-back failed (committer.recopy)
}

// write copies the file and returns it as pending.
func (fc *fileCopy) write() (*pending, error) {
	cp, en := fc.cp, fc.en
	src, err := fc.openSource()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	job := &transfer.Job{Src: src, Stat: en.st, SrcRes: en.srcRes, SrcInoLoose: en.srcInoLoose,
		Dir: fc.dd, DirRel: fc.dirRel, Tmp: fc.tmp, Staged: fc.tmp == en.dstName, Resume: en.resume,
		Again: fc.again, Buf: fc.buf, Remember: fc.remember}
	if pre := fc.pre; pre != nil {
		job.Pre = &pre.Preread
	}
	t := transfer.New(cp.config(), job)
	r, err := t.Run()
	if extra := t.Extra(); extra != nil {
		en.extra = extra
	}
	if err != nil {
		return nil, err
	}
	p := &pending{tmp: fc.tmp, sum: r.Sum, size: r.Size, action: r.Action, resumed: r.Resumed,
		ino: devIno{r.Made.Dev, r.Made.Ino}, checked: r.Checked, readAt: r.ReadAt}
	if r.Held != nil {
		p.kept.Hold(r.Held, cp.budget(r.HeldAhead))
	}
	p.kept.KeepWritten(r.Written, cp.budget(r.WrittenAhead))
	return p, nil
}

// budget is the run's budget of descriptors held ahead when ahead, else
// nil: what a descriptor a transfer kept open counts against.
func (cp *copier) budget(ahead bool) durable.Budget {
	if ahead {
		return &cp.e.ahead
	}
	return nil
}

// remember records the source's digest, read whole by the transfer, in
// the hash cache (with the extra digests read, if any).
func (fc *fileCopy) remember(sum verify.Sum, extra map[string]string, started time.Time) {
	en := fc.en
	if extra != nil {
		en.extra = extra
	}
	fc.cp.e.record.Source(en.srcKey, &en.st, sum, en.extra, started)
}

// openSource takes the source opened ahead, or waits until it can be read
// (transfer.AwaitSettled) and opens it.
func (fc *fileCopy) openSource() (*fileio.File, error) {
	if fc.pre != nil {
		return fc.pre.f, nil
	}
	if err := transfer.AwaitSettled(fc.cp.e.ctx, &fc.en.st, fc.en.srcRes); err != nil {
		return nil, err
	}
	return fc.cp.openSrc(fc.sd, fc.en)
}
