package copyengine

import (
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// What the audit log (--log) needs of the engine: events that say what was
// placed, with its size, digest and time (emit, fed with each outcome by
// outcome.EventOf), and a signal, OnFlush (records.Flushes), each time
// what was reported before a moment is on stable storage. A file takes its
// final name after its batch's flush; that rename is durable once the
// next flush of its filesystem is done: the next batch's (batchFlushed),
// or the run's last (engine.run, flushForLog). What --delete, --backup-dir
// and --move remove after that is flushed in turn (finish.go removals).

// emit stamps ev with the time and hands it to OnEvent. In a dry run it
// is where the report says "would": the dry run takes the real run's
// decisions and reports each under the real run's action, and emit names
// an action that writes as Would does.
func (e *engine) emit(ev Event) {
	if e.opt.OnEvent == nil {
		return
	}
	if e.skipWrite() {
		ev.Action = ev.Action.Would()
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	e.opt.OnEvent(ev)
}

// unchangedSum is the digest of a regular file found unchanged without
// being read, where it is known: an empty file's, or the one the cache
// vouches for on both sides.
func unchangedSum(en *entry) verify.Sum {
	switch {
	case !en.st.IsRegular():
	case en.st.Size == 0:
		return verify.Bytes(nil)
	case en.cache != nil && en.cache.SrcOK && en.cache.DstOK && en.cache.Src == en.cache.Dst:
		return en.cache.Src
	}
	return verify.Sum{}
}

// batchFlushed is called after a batch's flush, which began at at and
// flushed the filesystems in flushed (with their errors). The renames of
// the files placed before at may be on other filesystems the run writes in
// (a disk mounted inside DEST): those are flushed too, once each, and only
// when every one of them is durable is OnFlush told. A filesystem without
// a flush of its own that waits (the fallback: a per-file fsync) makes no
// rename durable: OnFlush then waits for the end of the run.
func (c *committer) batchFlushed(at time.Time, flushed map[uint64]error) {
	e := c.e
	if !e.records.flushes.Wanted() {
		return
	}
	for _, err := range flushed {
		if err != nil {
			return
		}
	}
	e.written.mu.Lock()
	var rest []*fileio.Dir
	for dev, d := range e.written.m {
		if _, done := flushed[dev]; !done {
			rest = append(rest, d)
		}
	}
	e.written.mu.Unlock()
	for _, d := range rest {
		if err := fileio.Syncfs(d); err != nil {
			return
		}
	}
	e.records.flushed(at)
}

// flushForLog makes what a stopping run placed durable, for OnFlush: an
// interrupted run, or one that filled its destination, ends without the
// final flush. A run whose drive is gone is not flushed (it would wait for
// a driver that no longer answers): what it placed since the last flush is
// not reported durable.
func (c *committer) flushForLog() {
	e := c.e
	if !e.records.flushes.Wanted() || e.dstRoot == nil || e.drives.goneErr() != nil {
		return
	}
	at := time.Now()
	if err := c.flushDirs(); err == nil {
		e.records.flushed(at)
	}
}

// What --delete, --backup-dir and --move remove is flushed once more
// after the run's final flush (finish.go removals: DEST, the backup directory and
// every source filesystem --move removed from); OnFlush is then told, by
// records.flushed, that every removal reported before that flush began is
// durable. Without that last call the removals, made after the run's
// final flush, would get no line.

// CheckLogPath refuses, with a *RefusalError, an audit log (--log) at path
// that lies inside the destination opt names, by whatever spelling (see
// checkManifestPath): the run would take it for a file the source lacks,
// and a later run from DEST would copy a file that grows as it is read. A
// request Run would refuse anyway is left to Run.
func CheckLogPath(opt *Options, path string) error {
	p, err := makePlan(opt.Sources, opt.Dest)
	if err != nil {
		return nil
	}
	return checkOutside(path, p.dstRoot, func() error {
		return refuse(path, "is inside the destination "+quote(p.dstRoot)+": the log would be written among the copies it describes", "write the log outside the destination")
	})
}
