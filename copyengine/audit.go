package copyengine

import (
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/records"
)

// What the audit log (--log) needs of the engine: events that say what was
// placed (emit, fed with each outcome by outcome.EventOf), and OnFlush,
// told by the records (records.Flushes) after each batch's flush
// (batchFlushed), the final flush, the flush of the removals (finish.go)
// and the flush of a run that stops (flushForLog).

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

// batchFlushed is called after a batch's flush, which began at at and
// flushed the filesystems in flushed (with their errors): the other
// filesystems the run writes in are flushed too before OnFlush is told
// (records.Flushes.AfterBatch).
func (c *committer) batchFlushed(at time.Time, flushed map[uint64]error) {
	c.e.records.AfterBatch(at, flushed, func() []*fileio.Dir { return c.e.written.Others(flushed) })
}

// flushForLog makes what a stopping run placed durable, for OnFlush
// (records.Flushes.Flush). A run whose drive is gone is not flushed (it
// would wait for a driver that no longer answers): what it placed since
// the last flush is not reported durable.
func (c *committer) flushForLog() {
	if c.e.dstRoot != nil && c.e.drives.Gone() == nil {
		c.e.records.Flush(c.flushDirs)
	}
}

// CheckLogPath refuses, with a *RefusalError, an audit log (--log) at path
// that lies inside the destination opt names, by whatever spelling
// (records.CheckLogPath). A request Run would refuse anyway is left to
// Run.
func CheckLogPath(opt *Options, path string) error {
	p, err := makePlan(opt.Sources, opt.Dest)
	if err != nil {
		return nil
	}
	return records.CheckLogPath(path, p.dstRoot)
}
