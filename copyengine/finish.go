package copyengine

import (
	"fmt"
	"time"

	"github.com/fastcopy/fastcopy/internal/endscript"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// The end of a run is one script (ending.script): its steps in order, the same
// list for a run that copied everything and for one that was stopped
// (cancelled, a drive gone, DEST full), run by package endscript. Each step
// says when it runs and whether it belongs after the final flush. A step
// that needs the flush is skipped once the run is cancelled: what it does
// (an ASC MHL generation, removals, the bag's tag files) vouches for copies
// a cancelled run no longer stands behind.

// ending is the end of a run: its script and the steps of its own.
type ending struct{ e *engine }

// endStep is one step of the end of a run (endscript.Step).
type endStep = endscript.Step

// Which runs take a step (endscript.When).
const (
	endAlways  = endscript.Always  // every run
	endDone    = endscript.Done    // a run that was not stopped
	endStopped = endscript.Stopped // a run that was stopped: it reports the stop
)

// step makes a step of a call that cannot fail.
func step(name string, when endscript.When, f func()) endStep { return endscript.Call(name, when, f) }

// script is the end of a run, in order.
func (en ending) script() []endStep {
	e := en.e
	return []endStep{
		// Duplicates and further hard-link names are placed before the
		// new directories they are in are published (each stage counts
		// them), so that a directory appears whole. A stopped run only
		// releases the duplicates.
		step("place duplicates", endAlways, e.dedupe.placeDups),
		step("release a dry run's duplicates", endAlways, e.dedupe.dry.Close),
		step("link further hard-link names", endAlways, e.dedupe.linkFollowers),
		{Name: "publish staged directories", When: endAlways, Decides: true, Do: func() error { e.staged.publishAll(); return nil }}, // the copy has stopped: what is staged is complete
		step("remember what the run holds in the cache", endAlways, e.record.StoreHeld),
		step("note metadata not kept", endDone, e.fs.noteNotKept),
		step("report the scrub", endDone, e.scrub.report),
		{Name: "write the manifest", When: endDone, Do: e.records.WriteManifest},
		// The directories get their mode and times now (a stopped run's
		// too: not 0700 and the time of their last write until the next
		// run).
		step("directory metadata", endAlways, e.commit.applyDirMeta),
		step("flush for the audit log", endStopped, e.commit.flushForLog),
		{Name: "stop", When: endStopped, Do: en.stopErr},
		{Name: "final flush", When: endDone, IsFlush: true, Do: en.finalFlush},
		{Name: "write the ASC MHL generation", When: endDone, Flush: true, Do: func() error { e.records.WriteMHL(); return nil }}, // every file it lists is in place and flushed
		{Name: "removals (--delete, --move)", When: endDone, Flush: true, Do: en.removals},
		{Name: "write the bag's tag files", When: endDone, Flush: true, Do: func() error { e.records.WriteBag(); return nil }}, // after --delete: the bag lists what data/ holds
	}
}

// run runs the end of a run's script (endscript.Run) and returns the
// run's error: the stop's, the first step's that failed, or the context's.
func (en ending) run(steps []endStep) error {
	e := en.e
	return endscript.Run(endscript.Config{Err: e.ctx.Err, Halted: e.drives.Halted, Strict: fileio.FaultsEnabled}, steps)
}

// stopErr is the error a stopped run returns: the drive that went, the
// destination that filled up, or the interruption.
func (en ending) stopErr() error {
	e := en.e
	if g := e.drives.Gone(); g != nil {
		return e.drives.stopGone(g)
	}
	if e.ctx.Err() == nil {
		return e.drives.stopFull()
	}
	return e.ctx.Err()
}

// finalFlush makes what the run wrote durable. --delete and --move remove
// only what this flush made safe to remove: they flush with --no-sync too.
func (en ending) finalFlush() error {
	e := en.e
	if (e.opt.NoSync && !e.removes()) || e.skipWrite() || e.dstRoot == nil {
		return nil
	}
	at := time.Now()
	if err := e.commit.flushDirs(); err != nil {
		return fmt.Errorf("flushing %q to stable storage: %w", e.dstRootPath, err)
	}
	e.record.StoreFlushed()
	e.records.Flushed(at)
	return nil
}

// removals runs after the final flush of a run that was not stopped:
// --delete, then --move, then a flush of what they removed or kept. A
// failed --delete pass (--max-delete, a guard) still has what it removed
// flushed and its directories' times put back; the error is the step's.
func (en ending) removals() error {
	e := en.e
	if !e.removes() {
		return nil
	}
	defer e.mover.Close()
	err := e.mirror.finish()
	if err == nil {
		e.mirror.record()
		e.moves.finish()
	}
	if e.sum.Deleted > 0 && !e.skipWrite() {
		// Removing entries moved their directories' times: put the
		// source's back (only those that differ are touched).
		e.commit.applyDirMeta()
	}
	if !e.opt.NoSync && !e.skipWrite() {
		at, flushErr := time.Now(), error(nil)
		if ferr := e.commit.flushDirs(); ferr != nil {
			flushErr = fmt.Errorf("flushing %q to stable storage: %w", e.dstRootPath, ferr)
		}
		if e.backups.d.IsOpen() {
			if ferr := e.backups.d.Syncfs(); ferr != nil && !fileio.IsFallback(ferr) && flushErr == nil {
				flushErr = fmt.Errorf("flushing --backup-dir %q to stable storage: %w", e.backups.d.Path(), ferr)
			}
		}
		// What --move removed is flushed on the sources' filesystems too:
		// exit 0 says the sources are gone, and a power cut must not bring
		// them back.
		if ferr := e.mover.Flush(); ferr != nil && flushErr == nil {
			flushErr = fmt.Errorf("--move: flushing the removals from the sources to stable storage: %w", ferr)
		}
		if flushErr == nil {
			e.records.Flushed(at) // the audit log (records.Flushes)
		} else if err == nil {
			err = flushErr
		}
	}
	if err == nil {
		err = e.ctx.Err()
	}
	return err
}
