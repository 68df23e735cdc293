package records

import (
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// What the audit log (--log) needs of a run: events that say what was
// placed, with its size, digest and time (the engine's OnEvent, fed with
// each outcome by outcome.EventOf), and a signal, OnFlush, each time what
// was reported before a moment is on stable storage. A file takes its
// final name after its batch's flush; that rename is durable once the
// next flush of its filesystem is done: the next batch's (AfterBatch), or
// the run's last (the engine's final flush, or Flush for a run that
// stops without it). What --delete, --backup-dir and --move remove after
// that is flushed in turn, once more after the run's final flush (DEST,
// the backup directory and every source filesystem --move removed from);
// OnFlush is then told, by Flushed, that every removal reported before
// that flush began is durable. Without that last call the removals, made
// after the run's final flush, would get no line.

// Flushes tells an audit log (--log) when what was reported is on
// stable storage: OnFlush(at) says every outcome reported before at is
// durable. Off says there is no flush to wait for (--no-sync, a dry
// run): OnFlush is then never called.
type Flushes struct {
	OnFlush func(at time.Time)
	Off     bool
}

// Wanted says whether OnFlush is to be called.
func (f *Flushes) Wanted() bool { return f.OnFlush != nil && !f.Off }

// Flushed tells OnFlush that what was reported before at is durable.
func (f *Flushes) Flushed(at time.Time) {
	if f.Wanted() {
		f.OnFlush(at)
	}
}

// AfterBatch is told after a batch's flush, which began at at and
// flushed the filesystems in flushed (with their errors). The renames of
// the files placed before at may be on other filesystems the run writes
// in (a disk mounted inside DEST), which others returns: those are
// flushed too, once each, and only when every one of them is durable is
// OnFlush told. A filesystem without a flush of its own that waits (the
// fallback: a per-file fsync) makes no rename durable: OnFlush then waits
// for the end of the run.
func (f *Flushes) AfterBatch(at time.Time, flushed map[uint64]error, others func() []*fileio.Dir) {
	if !f.Wanted() {
		return
	}
	for _, err := range flushed {
		if err != nil {
			return
		}
	}
	for _, d := range others() {
		if err := fileio.Syncfs(d); err != nil {
			return
		}
	}
	f.Flushed(at)
}

// Flush makes what a stopping run placed durable with flush, for
// OnFlush: an interrupted run, or one that filled its destination, ends
// without the final flush. Once flush succeeds, OnFlush is told that what
// was reported before it began is durable.
func (f *Flushes) Flush(flush func() error) {
	if !f.Wanted() {
		return
	}
	at := time.Now()
	if err := flush(); err == nil {
		f.Flushed(at)
	}
}
