// Package mirror is --delete, with --max-delete and --delete-force: after
// the copy is verified and durable, it removes from DEST what the sources
// lack, in the directories the walk listed in full, through directory
// descriptors opened beneath DEST, never following a symlink, each entry
// removed only while it is the inode planned. Before anything is written,
// Guard refuses a mirror that looks like a mistake: a source that is empty
// or on another filesystem than the last time (a drive not mounted), a
// source or a --link-dest inside DEST.
//
// Its input is Config: the roots, the flags, the bound, the proof it needs
// of the run (Proof) and the sink of what it did (Report). What may be
// removed, and the proof each removal needs (docs/design.md, "What
// fastcopy removes or replaces, and the proof each needs"), is decided in
// one function, keep (policy.go). The package imports nothing of the copy
// engine.
package mirror
