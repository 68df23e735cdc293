package copyengine

import (
	"fmt"

	"github.com/fastcopy/fastcopy/internal/drives"
	"github.com/fastcopy/fastcopy/internal/fileio"
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

// watch adds a root: d when given (the run keeps it open), else path opened
// here.
func (dw *driveWatch) watch(side, path string, d *fileio.Dir) {
	dw.Add(drives.Root{Side: side, Path: path, Dir: d})
}

func (dw *driveWatch) close()                   { dw.Close() }
func (dw *driveWatch) placed()                  { dw.Placed() }
func (dw *driveWatch) halted() bool             { return dw.Halted() }
func (dw *driveWatch) goneErr() *DriveGoneError { return dw.Gone() }

// driveGone judges the failure err of rel: it returns true when a root's
// filesystem is gone (now, or found so before), after cancelling the run
// when it is the destination's. The failure is then fallout, not reported
// on its own.
func (dw *driveWatch) driveGone(rel string, err error) bool { return dw.judgeDrives(rel, err, true) }

// judgeDrives is driveGone; a failure that is not a file's last try (a read
// to be retried) does not count towards the streak.
func (dw *driveWatch) judgeDrives(rel string, err error, last bool) bool {
	v := dw.Judge(rel, err, last)
	if v.Cancel {
		dw.e.cancel() // nothing more can be written or checked there
	}
	return v.Fallout
}

// destFull judges the failure err of rel: on the first that says the
// destination has no room it halts the run and returns false (the file is
// reported); a later one is fallout of the same and returns true.
func (dw *driveWatch) destFull(rel string, err error) bool { return dw.Full(rel, err).Fallout }

// kept is how many files are in place, verified or unchanged.
func (dw *driveWatch) kept() int64 {
	e := dw.e
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sum.Copied + e.sum.Deduped + e.sum.Skipped
}

// destStillThere checks, before a run reports success, that the
// destination's path still leads to the directory it wrote to
// (drives.Watch.DestGone).
func (dw *driveWatch) destStillThere() error {
	g := dw.DestGone()
	if g == nil {
		return nil
	}
	g.Kept = dw.kept()
	return g
}

// stopGone ends a run whose drive went away: what is in place is made
// durable where the destination still answers (the source went), and the
// error says how much that is.
func (dw *driveWatch) stopGone(g *DriveGoneError) error {
	e := dw.e
	g.Kept = dw.kept()
	if g.Side != "destination" && !e.opt.NoSync && !e.skipWrite() && e.dstRoot != nil {
		if err := e.commit.flushDirs(); err != nil {
			return fmt.Errorf("%w; and flushing %q to stable storage: %w", g, e.dstRootPath, err)
		}
	}
	return g
}

// stopFull ends a run halted by a full destination: what is in place is
// made durable, and the error says how much that is and what is free.
func (dw *driveWatch) stopFull() error {
	e := dw.e
	f := dw.FullErr()
	if f == nil {
		return nil
	}
	f.Root = e.dstRootPath
	e.mu.Lock()
	f.Copied, f.Bytes, f.Mismatch = e.sum.Copied, e.sum.Bytes, e.sum.Mismatches > 0
	e.mu.Unlock()
	f.Total = e.stats.FilesTotal.Load()
	f.Free = -1
	if sp, err := fileio.SpaceOf(e.dstRootPath); err == nil && sp.Known() {
		f.Free = sp.Free
	}
	if !e.opt.NoSync && !e.skipWrite() && e.dstRoot != nil {
		if err := e.commit.flushDirs(); err != nil {
			return fmt.Errorf("%w; and flushing %q to stable storage: %w", f, e.dstRootPath, err)
		}
		e.record.StoreFlushed()
	}
	return f
}
