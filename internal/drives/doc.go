// Package drives watches the filesystems a run reads and writes, so that
// a drive unplugged, a FUSE driver that died or a destination that filled
// up stops the run with one error instead of failing every file after it.
//
// It owns the judgement (watch.go): which failures are a sign of a drive
// gone (an I/O errno, and then a root that no longer answers or whose path
// leads elsewhere, a driver's ENOTCONN, or a streak of I/O failures with
// nothing placed between them) and which of a full destination (ENOSPC,
// EDQUOT), and the errors that say so, DriveGoneError and DestFullError.
//
// Its input is the roots to watch (Root: side, path, the open directory,
// given to Watch.Add) and the failures the run meets (Judge, Full); its
// answers are Verdicts (fallout of a drive found gone or a full
// destination, and whether the destination went, so that the run is to be
// cancelled) and the errors found (Gone, FullErr, DestGone), and it halts
// the walk and the copy (Halted) when a source went or the destination is
// full. A root is only ever asked through the descriptor opened at the
// start and a stat of its path. The two errors are re-exported by
// copyengine by alias. It cancels and counts nothing itself: the caller
// does, and gives what it had when it stopped (Ending: the counts and the
// flush of what is in place) to StopGone and Watch.StopFull (stop.go),
// which flush it where the destination still answers and make the error
// that ends the run. It imports nothing of copyengine.
package drives
