package copyengine

import (
	"errors"

	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// report is the one way the run tells what became of an entry (placed,
// skipped, fixed, linked, failed): every listener hears it, in this
// order (subscribeOutcomes): the hash cache remembers the destination
// file, the records list it, the summary counts it (the only place that
// adds to the per-kind counts) with the live Stats, and the audit log
// and OnEvent get its event. An entry placed in a new directory is
// reported once that directory is published (stager.report). --move
// notes its source beside the report (mover.addItem): its item is taken
// before the directory handle it names is closed.
func (e *engine) report(o *outcome.Outcome) { e.outcomes.Report(o) }

// subscribeOutcomes subscribes the run's listeners to its outcomes.
func subscribeOutcomes(e *engine) {
	h := &e.outcomes
	h.Subscribe(func(o *outcome.Outcome) { // the hash cache
		if d := o.Dest; d != nil {
			e.record.rememberDest(d.Key, d.Stat, o.Sum, d.Started, d.ReadAt)
		}
	})
	h.Subscribe(e.records.listen)          // the manifest, the ASC MHL generation, the bag
	h.Subscribe(func(o *outcome.Outcome) { // the summary and the live counters
		if o.Kind == outcome.Removed {
			return // --delete and --move count their removals themselves (delete.go, move.go)
		}
		if o.Kind == outcome.Placed {
			e.drives.placed() // both drives answer
		}
		e.mu.Lock()
		addOutcome(&e.sum, o, e.opt.Verify != VerifyOff)
		e.mu.Unlock()
		e.stats.FilesDone.Add(1)
		e.stats.BytesDone.Add(o.Size)
	})
	h.Subscribe(func(o *outcome.Outcome) { e.emit(eventOf(o)) }) // the audit log, OnEvent
}

// addOutcome adds o to the summary's counts. verified says the run reads
// its copies back (Verify is not off): a copy, clone or duplicate placed
// is then counted as verified.
func addOutcome(s *Summary, o *outcome.Outcome, verified bool) {
	switch o.Kind {
	case outcome.Failed:
		s.Failed++
		s.Failures = append(s.Failures, newFailure(o.Path, o.Err))
		var mm *MismatchError
		if errors.As(o.Err, &mm) {
			s.Mismatches++
		}
		return
	case outcome.Skipped:
		s.Skipped++
		return
	case outcome.Fixed:
		s.Skipped++
		s.MetaUpdated++
		return
	case outcome.Linked:
		s.Linked++
		return
	case outcome.Placed:
	default:
		return
	}
	switch a := Action(o.Action); a {
	case ActDedupClone, ActDedupLink:
		s.Deduped++
		s.BytesNotWritten += o.Size
		s.DiskSaved += o.Size
		if a == ActDedupClone {
			s.DedupCloned++
		} else {
			s.DedupLinked++
		}
	case ActCopy, ActClone:
		s.Copied++
		s.Bytes += o.Size
		if a == ActClone {
			s.Cloned++
		}
		if o.LinkCopy {
			s.LinkCopies++
			s.LinkCopyPaths = append(s.LinkCopyPaths, o.Path)
		}
	case ActSymlink:
		s.Symlinks++
		return
	case ActSpecial:
		s.Specials++
		return
	case ActLinkDest:
		s.LinkDest++
		return
	default: // ActNotKept: said once per run (Summary.NotKept)
		return
	}
	if verified {
		s.Verified++ // read back (committer.placed)
		s.VerifiedBytes += o.Size
	}
}

// eventOf is the event an outcome is reported as.
func eventOf(o *outcome.Outcome) Event {
	if o.Kind == outcome.Failed {
		return Event{Action: ActFail, Path: o.Path, Err: o.Err}
	}
	ev := Event{Action: Action(o.Action), Path: o.Path, Size: o.Size, Sum: o.Sum}
	switch {
	case o.LinkCopy:
		ev.Action = ActLinkCopy
	case ev.Action == ActLinkDest:
		ev.Sum = verify.Sum{} // not among the actions Event.Sum is given for
	}
	return ev
}
