package copyengine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/cacheuse"
	"github.com/fastcopy/fastcopy/internal/durable"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

const (
	commitBatchFiles = 2048      // files per flush-and-verify batch
	commitBatchBytes = 256 << 20 // bytes per batch
	commitMaxWait    = time.Second
)

// pending is a file written under its temporary name, waiting to be made
// durable, read back and renamed onto its final name.
type pending struct {
	src, dst *handle
	en       entry
	rel      string
	tmp      string
	sum      verify.Sum // of the source, computed while it was read
	size     int64
	action   Action
	target   *dedup.Target // set when later duplicates may share this file
	linkedTo *dedup.Target // a duplicate hard-linked to this target
	readAt   time.Time     // when the read-back began
	checked  bool          // read back while it was written (transfer: streamCheck)
	placed   *fileio.Stat  // the file under its final name, when needed
	stage    *stage        // written under its own name in this staged directory
	placedIn *stage        // placed under a temporary name in this staged directory
	ino      devIno        // the inode written under tmp (zero: not known)
	resumed  int64         // bytes of a temporary left by an earlier run kept (see transfer.Resume)
	// kept holds the temporary's descriptors: as written (transfer:
	// holdWritten), opened ahead for its read-back (durable.Prefetch), and
	// the inode read back, kept open until it has its name.
	kept durable.Kept
}

// committer is the stage that makes written files permanent. It gathers
// them into batches; for each batch it makes the files durable, one flush
// of each filesystem the batch wrote in (flushBatch, durable.Flush), then
// hands the batch's files to the read-back workers (durable.Pool), which
// read each back (from the device with --verify=device) and only then
// rename it onto its final name. Three things overlap: workers write batch
// k+2 while batch k+1 is flushed and batch k is read back.
type committer struct {
	e  *engine
	in chan *pending // written files, from the copy workers

	workers int                     // read-back workers
	pool    *durable.Pool[*pending] // the read-back workers, taking flushed groups
	back    durable.Config          // the run's read-backs
	batch   []*pending              // gathered, not yet flushed
	bytes   int64                   // in batch
	oldest  time.Time               // when the first file of batch came
	files   []durable.File          // batch, as durable.Flush takes it (reused)
	errs    []error                 // durable.Flush's answer per file (reused)

	dirs []dirMeta // the directories the walk made or went through (addDir; under mu), given their metadata last

	mu        sync.Mutex
	discarded []*pending // closed by discard, their temporaries removed once the committer stops (removeDiscarded)
}

// prepare makes the committer's inbox and its read-backs' Config, before
// any copy worker starts (a dedup worker reads back through commitOne).
func (c *committer) prepare() {
	e := c.e
	c.in = make(chan *pending, commitBatchFiles)
	c.workers = durable.Workers(e.sum.Jobs)
	c.back = durable.Config{Ctx: e.ctx, Device: e.opt.Verify == VerifyDevice, PrefetchMax: prefetchMax,
		Budget: &e.ahead, Sink: e.bw.Sink(e.ctx), Stats: e.stats, NoDrop: func() {
			e.dedupe.noteVerify("this platform cannot drop cached pages: files were read back through the page cache")
		}, Res: e.fs.info.KnownResolution, KeepBtime: e.keepBtime}
}

// run commits what comes in until the channel is closed and every file
// taken has been read back and placed.
func (c *committer) run() {
	// Room for a whole batch (each group holds at least one file), so that
	// the committer can flush the next batch while this one is read back.
	c.pool = durable.StartPool(c.workers, commitBatchFiles, c.readBackWorker)
	defer func() {
		c.pool.Stop()
		c.removeDiscarded()
	}()

	tick := time.NewTicker(commitMaxWait / 4)
	defer tick.Stop()
	for {
		select {
		case p, ok := <-c.in:
			if !ok {
				c.flush()
				return
			}
			if len(c.batch) == 0 {
				c.oldest = time.Now()
			}
			c.batch = append(c.batch, p)
			c.bytes += p.size
			if len(c.batch) >= commitBatchFiles || c.bytes >= commitBatchBytes {
				c.flush()
			}
		case <-tick.C:
			if len(c.batch) > 0 && time.Since(c.oldest) >= commitMaxWait {
				c.flush()
			}
		}
	}
}

// flush makes the batch durable and hands it to the read-back workers.
func (c *committer) flush() {
	if len(c.batch) > 0 {
		for _, g := range durable.Groups(c.flushBatch(c.batch), c.workers) {
			c.pool.Send(g)
		}
	}
	c.batch, c.bytes = nil, 0
}

// readBackWorker reads back and places the groups of files it is given.
func (c *committer) readBackWorker(in <-chan []*pending) {
	e := c.e
	bp := e.buf()
	defer e.putBuf(bp)
	for g := range in {
		if c.back.Prefetches() {
			for _, p := range g {
				if !c.back.Prefetch(p.temp()) {
					break // no descriptor to spare: the rest are opened in turn
				}
			}
		}
		for _, p := range g {
			if e.ctx.Err() != nil {
				c.discard(p)
				continue
			}
			c.commitOne(p, *bp)
		}
	}
}

// temp is p as its read-back takes it.
func (p *pending) temp() durable.Temp {
	return durable.Temp{Path: p.rel, Dir: p.dst.d, Name: p.tmp, Size: p.size, Sum: p.sum,
		Dev: p.ino.dev, Ino: p.ino.ino, Checked: p.checked, Kept: &p.kept, ReadAt: &p.readAt,
		Src: &p.en.st, Linked: p.action == ActDedupLink}
}

// Take takes a descriptor of the budget of those opened ahead: the
// budget is the read-backs' durable.Budget.
func (b *aheadBudget) Take() bool { return b.take() }

// Give gives back a descriptor taken.
func (b *aheadBudget) Give() { b.give() }

// commitOne reads one file back, sets its times and renames it into place.
// The inode read back is held open until it has its final name: its times
// are set through that descriptor, the name is checked to lead to it after
// the rename, and what is recorded of it (the hash cache, a dedup target)
// comes from fstat of that descriptor. A writer in DEST who swaps the
// temporary for another file after its read-back thus makes the file fail,
// never passes their file off as the verified copy.
func (c *committer) commitOne(p *pending, buf []byte) {
	e := c.e
	dropped := false
	defer func() {
		if !dropped {
			p.release()
		}
	}()
	dd := p.dst.d
	if e.opt.Verify != VerifyOff {
		// On a mismatch: copy once more, flush just this file, and read
		// it back again.
		err := c.back.Verify(p.temp(), buf, func() (durable.Temp, error) { return c.recopy(p, buf) })
		if err != nil && errors.Is(err, e.ctx.Err()) {
			// Stopped while read back: its descriptors were closed just
			// now, its temporary is removed once the committer has stopped
			// (discard).
			dropped = true
			c.discard(p)
			e.fail(p.rel, err)
			return
		}
		if err != nil {
			dropped = true // failPending releases it
			c.failPending(p, err)
			return
		}
	}
	if p.stage != nil {
		// In place already: its directory is renamed once all its files are.
	} else if err := e.backups.beforeReplace(dd, p.en.dstName, p.rel); err != nil {
		p.kept.Close() // before the name goes: FUSE hides a file removed while open
		_ = dd.Remove(p.tmp)
		c.groupDone(p, false)
		e.fail(p.rel, err)
		return
	} else if err := dd.Rename(p.tmp, dd, p.en.dstName); err != nil {
		p.kept.Close()
		_ = dd.Remove(p.tmp)
		c.groupDone(p, false)
		if st, serr := dd.Lstat(p.en.dstName); serr == nil && st.IsDir() {
			err = fmt.Errorf("destination is a directory, but the source is a file; remove it and rerun: %w", err)
		}
		e.fail(p.rel, err)
		return
	}
	verified := e.opt.Verify != VerifyOff
	if verified {
		st, err := c.back.Placed(p.temp(), p.en.dstName)
		if err != nil {
			c.groupDone(p, false)
			e.fail(p.rel, err)
			return
		}
		p.placed = &st
	} else if p.target != nil || p.linkedTo != nil {
		if st, err := dd.Lstat(p.en.dstName); err == nil {
			p.placed = &st
		}
	}
	c.groupDone(p, true)
	mv, sum := e.moves.item(p.src, &p.en, p.rel), p.sum // --move: noted once placed
	e.staged.report(p.stageOf(), p.rel, func() { c.reportPlaced(p); e.mover.Note(mv, sum) })
}

// reportPlaced reports p as placed (report): to the hash cache, the
// records, the counts and the events.
func (c *committer) reportPlaced(p *pending) {
	e := c.e
	o := &outcome.Outcome{
		Kind: outcome.Placed, Action: p.action, Path: p.rel, Size: p.size,
		Sum: p.sum, Extra: p.en.extra, Listed: true,
		LinkCopy: p.en.linkCopy && (p.action == ActCopy || p.action == ActClone),
	}
	if p.placed != nil && e.cache != nil && e.opt.Verify != VerifyOff {
		o.Dest = &outcome.Dest{Key: e.dstSide.Key(p.rel), Stat: p.placed, Started: p.readAt}
		if e.opt.Verify == VerifyDevice {
			o.Dest.ReadAt = cacheuse.DeviceRead(p.readAt)
		}
	}
	e.report(o)
}

// keepBtime gives the copy tmp in dd its source's creation time, where the
// platform reports one (Windows: st.Btime; robocopy keeps it too). A
// destination that refuses it (a network share, a FUSE driver) keeps
// none: said once per run as not kept, not a failure of the file.
func (e *engine) keepBtime(dd *fileio.Dir, tmp string, st *fileio.Stat) {
	if st.Btime == 0 {
		return
	}
	if err := fileio.SetBtime(dd, tmp, st.Btime); err != nil {
		e.fs.info.CannotKeep(lostBtimes, fmt.Errorf("%v: %w", err, fileio.ErrUnsupported))
	}
}

// recopy writes the file again after a mismatch (durable.Verify flushes
// and checks it once more).
func (c *committer) recopy(p *pending, buf []byte) (durable.Temp, error) {
	e := c.e
	p.en.resume = false // what read back wrong is not taken up again
	p.kept.Close()
	_ = p.dst.d.Remove(p.tmp) // the copy that read back different, written by this run
	fc := fileCopy{cp: e.copier, sd: p.src.d, dd: p.dst.d, dirRel: p.dst.rel, en: &p.en, tmp: p.tmp, buf: buf, again: true}
	np, err := fc.write()
	if err != nil {
		return durable.Temp{}, err
	}
	p.sum, p.size, p.ino = np.sum, np.size, np.ino
	p.kept = np.kept // p's own were closed above
	// Read back again after its own flush, unless the copy was read
	// back as it was written (a large file, or --verify=cache): that read
	// counted already, and proves as much.
	p.checked, p.readAt = np.checked, np.readAt
	if p.action == ActDedupLink || p.action == ActDedupClone {
		// Shared data that read back wrong was replaced by a copy.
		p.action, p.linkedTo = np.action, nil
	}
	return p.temp(), nil
}

// syncTemp flushes p's temporary to stable storage (durable.SyncFile).
func (c *committer) syncTemp(p *pending) error { return durable.SyncFile(p.dst.d, p.tmp) }

func (c *committer) failPending(p *pending, err error) {
	e := c.e
	p.kept.Close()
	e.staged.unwrite(p.stage, p.dst.d, p.tmp)
	c.groupDone(p, false)
	e.fail(p.rel, err)
	p.release()
}

// discard drops a file of a run that is stopping: it closes every
// descriptor of its temporary now and leaves the removal of its name to
// removeDiscarded, once the committer has stopped. A FUSE driver may be
// told of a close after close returns (ntfs-3g hid temporaries whose name
// was removed right after the descriptor kept from their write,
// pending.kept, or their read-back's was closed); a name removed while
// the driver takes its file for open is hidden as ".fuse_hidden...", and
// left on the drive if the driver dies or the drive is pulled out.
func (c *committer) discard(p *pending) {
	p.kept.Close()
	c.groupDone(p, false)
	c.mu.Lock()
	c.discarded = append(c.discarded, p)
	c.mu.Unlock()
}

// removeDiscarded removes the temporaries of the files discard dropped,
// unless the next run can take them up (keepsTemp), and releases them: all
// their descriptors were closed when they were dropped, and every other
// file has left the committer since. It comes before the staged
// directories are published (a file released settles its stage).
func (c *committer) removeDiscarded() {
	e := c.e
	c.mu.Lock()
	ps := c.discarded
	c.discarded = nil
	c.mu.Unlock()
	for _, p := range ps {
		if p.action != ActCopy || !e.copier.keepsTemp(&p.en, p.tmp) {
			e.staged.unwrite(p.stage, p.dst.d, p.tmp)
		}
		p.release()
	}
}

func (c *committer) groupDone(p *pending, ok bool) {
	t := p.target
	if p.linkedTo != nil && ok {
		// Linking moved the shared inode's ctime and link count: it is still
		// the verified content, so the target is restated, not abandoned.
		t = p.linkedTo
	}
	if t != nil {
		var placed dedup.Placed
		if ok {
			st := p.placed
			ok = st != nil
			if ok {
				placed = dedup.Placed{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime}
			}
		}
		t.Done(ok, placed)
	}
	if g := p.en.group; g != nil {
		g.ok, g.sum, g.extra = ok, p.sum, p.en.extra
		if ok {
			// The inode its further names are linked to: the one read back
			// and found under the final name, or without a read-back the
			// one written.
			g.ino = p.ino
			if p.placed != nil {
				g.ino = devIno{p.placed.Dev, p.placed.Ino}
			}
		}
		close(g.done)
	}
}

// stageOf is the staged directory p is placed in, if any.
func (p *pending) stageOf() *stage {
	if p.stage != nil {
		return p.stage
	}
	return p.placedIn
}

func (p *pending) release() {
	p.kept.Close()
	p.src.release()
	p.dst.release()
	p.stage.settle()
}
