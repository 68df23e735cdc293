// Package mirror is --delete, with --max-delete and --delete-force: after
// the copy is verified and durable, it removes from DEST what the sources
// lack, in the directories the walk listed in full, through directory
// descriptors opened beneath DEST, never following a symlink, each entry
// removed only while it is the inode planned. Before anything is written,
// Guard refuses a mirror that looks like a mistake: a source that is empty
// or on another filesystem than the last time (a drive not mounted), a
// source or a --link-dest inside DEST.
//
// Its input is Config, the whole contract: DEST and the source roots, the
// --link-dest directories, --delete-force and --max-delete, the hash
// cache's notes, the proof it asks of the run (Proof: open a DEST
// directory beneath the root, fastcopy's own record and temporaries, the
// filter rules, the ASC MHL history, the hash cache's files), the
// --backup-dir keeping and the dry run's gate. It reports what it removed,
// kept (and why) and failed to remove through Report, which copyengine's
// mirrorStage (mirror.go) counts and emits as events, and returns a
// *MaxDeleteError or the run's cancellation. Nothing is removed before
// Pass.Finish, which copyengine calls after the final flush (the step
// removals of the end of a run, copyengine/finish.go). What may be
// removed, and the proof each removal needs (docs/design.md, "What
// fastcopy removes or replaces, and the proof each needs"), is decided in
// one function, keep (policy.go). The package imports nothing of the copy
// engine.
package mirror
