// Package endscript runs the end of a run as one script: its steps in
// order, the same list for a run that copied everything and for one that
// was stopped (cancelled, a drive gone, the destination full).
//
// Its input is the list of Steps and a Config: the run's cancellation
// (Err), whether it was halted otherwise (Halted), and whether a
// misordered script is a panic (Strict, test builds). Each Step says which
// runs take it (When), whether it belongs after the final flush (Flush),
// whether it is the final flush (IsFlush), and whether, once it is done,
// whether the run was stopped is decided (Decides). Run guarantees: a
// step for the runs not stopped is never taken by a stopped run and the
// reverse; a step that needs the flush is skipped, and the run ends with
// Err's error, once the run is cancelled (what it does vouches for copies
// a cancelled run no longer stands behind); and the first step that fails
// ends the script with its error. The copy engine writes the script
// (copyengine/finish.go); this package only runs it.
package endscript
