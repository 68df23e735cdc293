// Package move is fastcopy's verified move (--move): the journal of the
// source entries whose copies reached their final names, the rule by
// which one of them may be removed once the copies are durable, the
// removal of those and of the source directories left empty, and the
// flush that makes those removals durable.
//
// Until Finish every file exists complete at least in the source; from
// then on at least in DEST. A source name is removed only on proof of
// identity and content, never on its name: it must still be the inode,
// type, size and mtime (and change time, where its filesystem keeps one)
// its copy was made from, or, where inode numbers or change times do not
// last, read back to the digest its copy was verified with; and its copy
// in DEST must not be that very inode. The rule is one function,
// proven, in rule.go: change it there. A source whose extended
// attributes or ACLs its copy lacks is kept (metaLost), and the move is
// then incomplete (MoveIncompleteError).
//
// Its whole input is Config: the dry-run and no-sync flags, whether the
// copies took every attribute namespace (a root run), the run's directory
// open, DEST's root as the run opened and locked it, the source
// directories the copy went through, the failures so far (nothing at or
// above one is removed), whether the run was stopped, and three callbacks
// by which it reports a source kept and failed, a source removed (or that
// a dry run would remove), and the bytes it read again. Journal.Finish
// returns how many sources it kept in place and why, and
// Journal.Incomplete the MoveIncompleteError. It imports nothing of
// copyengine, and counts and emits nothing itself.
//
// The engine touches it at the outcome of each entry (an Item taken with
// Journal.Source while the source directory is open, noted with
// Journal.Note once its copy reached its final name: copyengine's
// moveStage.item and moveStage.note, move.go), once at the end of the run
// (Finish after the final flush, Flush after the engine's own, Close), and
// where a kept file or a dry run's directory is met (KeptInPlace,
// NoteDryDir).
package move
