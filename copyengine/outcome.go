package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/outcome"
)

// What a run reports, and how it is summed, is internal/outcome's: its
// names are copyengine's too.
type (
	// Action is what the engine did with one entry.
	Action = outcome.Action
	// Event reports one entry acted on.
	Event = outcome.Event
	// Stats are live counters of a run.
	Stats = outcome.Stats
	// Failure is one file that could not be copied.
	Failure = outcome.Failure
	// Summary is the outcome of a run.
	Summary = outcome.Summary
	// VerifyMode says how a written file is read back before it takes
	// its name.
	VerifyMode = outcome.VerifyMode
)

// The --verify modes.
const (
	VerifyDevice = outcome.VerifyDevice
	VerifyCache  = outcome.VerifyCache
	VerifyOff    = outcome.VerifyOff
)

// The actions an Event reports (outcome.Action).
const (
	ActCopy              = outcome.ActCopy
	ActClone             = outcome.ActClone
	ActLink              = outcome.ActLink
	ActLinkCopy          = outcome.ActLinkCopy
	ActDedupClone        = outcome.ActDedupClone
	ActDedupLink         = outcome.ActDedupLink
	ActSymlink           = outcome.ActSymlink
	ActSpecial           = outcome.ActSpecial
	ActMkdir             = outcome.ActMkdir
	ActSkip              = outcome.ActSkip
	ActMeta              = outcome.ActMeta
	ActFail              = outcome.ActFail
	ActNotKept           = outcome.ActNotKept
	ActWouldDo           = outcome.ActWouldDo
	ActCleanTmp          = outcome.ActCleanTmp
	ActLeaveTemp         = outcome.ActLeaveTemp
	ActOwnCache          = outcome.ActOwnCache
	ActResume            = outcome.ActResume
	ActRetry             = outcome.ActRetry
	ActLinkDest          = outcome.ActLinkDest
	ActLinkDestCopy      = outcome.ActLinkDestCopy
	ActRotten            = outcome.ActRotten
	ActDelete            = outcome.ActDelete
	ActWouldDelete       = outcome.ActWouldDelete
	ActBackup            = outcome.ActBackup
	ActRemoveSource      = outcome.ActRemoveSource
	ActWouldRemoveSource = outcome.ActWouldRemoveSource
)

// report is the one way the run tells what became of an entry (placed,
// skipped, fixed, linked, failed): every listener hears it, in this
// order (subscribeOutcomes): the hash cache remembers the destination
// file, the records list it, the summary counts it (Summary.Add, the
// only place that adds to the per-kind counts) with the live Stats, and
// the audit log and OnEvent get its event (outcome.EventOf). An entry
// placed in a new directory is reported once that directory is published
// (stager.report). --move notes its source beside the report
// (moveStage.note, move.Journal.Note): its item is taken before the
// directory handle it names is closed.
func (e *engine) report(o *outcome.Outcome) { e.outcomes.Report(o) }

// subscribeOutcomes subscribes the run's listeners to its outcomes.
func subscribeOutcomes(e *engine) {
	h := &e.outcomes
	h.Subscribe(func(o *outcome.Outcome) { // the hash cache
		if d := o.Dest; d != nil {
			e.record.Dest(d.Key, d.Stat, o.Sum, d.Started, d.ReadAt)
		}
	})
	h.Subscribe(e.records.Listen)          // the manifest, the ASC MHL generation, the bag
	h.Subscribe(func(o *outcome.Outcome) { // the summary and the live counters
		if o.Kind == outcome.Removed {
			return // --delete and --move count their removals themselves (mirror.go, move.go)
		}
		if o.Kind == outcome.Placed {
			// Both drives answer: the streak of I/O failures that judges a
			// drive gone starts again (a dry run's would-place too).
			e.drives.Placed()
		}
		e.mu.Lock()
		e.sum.Add(o, e.opt.Verify != VerifyOff)
		e.mu.Unlock()
		e.stats.FilesDone.Add(1)
		e.stats.BytesDone.Add(o.Size)
	})
	h.Subscribe(func(o *outcome.Outcome) { e.emit(outcome.EventOf(o)) }) // the audit log, OnEvent
}
