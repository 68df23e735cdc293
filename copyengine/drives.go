package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/drives"
)

// The glue to internal/drives, which judges whether a failure means a
// drive is gone or the destination full: the engine cancels or halts the
// run on its verdicts, and puts in place, flushes and counts what it had.

// DriveGoneError is the fatal error of a run whose source or destination
// filesystem stopped answering (drives.DriveGoneError).
type DriveGoneError = drives.DriveGoneError

// DestFullError is the error of a run stopped by a full destination
// (drives.DestFullError). It counts as ErrSomeFailed (exit 3).
type DestFullError = drives.DestFullError

// driveWatch is the run's drives.Watch, with the engine it stops.
type driveWatch struct {
	e *engine
	drives.Watch
}

// judgeDrives judges the failure err of rel: it returns true when a
// root's filesystem is gone (now, or found so before), after cancelling
// the run when it is the destination's. The failure is then fallout, not
// reported on its own. A failure that is not a file's last try (a read to
// be retried, last false) does not count towards the streak.
func (dw *driveWatch) judgeDrives(rel string, err error, last bool) bool {
	v := dw.Judge(rel, err, last)
	if v.Cancel {
		dw.e.cancel() // nothing more can be written or checked there
	}
	return v.Fallout
}

// destStillThere checks, before a run reports success, that the
// destination's path still leads to the directory it wrote to
// (drives.Watch.DestGone).
func (dw *driveWatch) destStillThere() error {
	g := dw.DestGone()
	if g == nil {
		return nil
	}
	g.Kept = dw.ending(nil).Kept
	return g
}

// stopGone ends a run whose drive went away (drives.StopGone).
func (dw *driveWatch) stopGone(g *DriveGoneError) error { return drives.StopGone(g, dw.ending(nil)) }

// stopFull ends a run halted by a full destination (drives.Watch.StopFull);
// once what is in place is flushed, the hash cache's entries waiting for
// that flush are stored.
func (dw *driveWatch) stopFull() error { return dw.StopFull(dw.ending(dw.e.record.StoreFlushed)) }

// ending is what the run has now, for the error that ends it: the counts,
// and the flush of what is in place (then flushed, when given, is told).
func (dw *driveWatch) ending(flushed func()) drives.Ending {
	e := dw.e
	e.mu.Lock()
	end := drives.Ending{Root: e.dstRootPath, Kept: e.sum.Copied + e.sum.Deduped + e.sum.Skipped,
		Copied: e.sum.Copied, Bytes: e.sum.Bytes, Mismatch: e.sum.Mismatches > 0}
	e.mu.Unlock()
	end.Total = e.stats.FilesTotal.Load()
	if !e.opt.NoSync && !e.skipWrite() && e.dstRoot != nil {
		end.Flush = func() error {
			err := e.commit.flushDirs()
			if err == nil && flushed != nil {
				flushed()
			}
			return err
		}
	}
	return end
}
