// Package meta gives a copy the metadata of its source: owner, mode,
// extended attributes (with them POSIX ACLs) and the comparison that says
// whether an unchanged destination entry needs any of them set again. It
// decides what a copy may be given from who copies (Config: root or not,
// the process's uid, groups and umask) and acts only on what was opened,
// through descriptors (fileio.File, fileio.Node), never on a name.
//
// What a destination filesystem cannot keep (an owner on exFAT, a mode
// FUSE drops, an attribute too large) is no failure of the entry: each
// such refusal is handed to Config.CannotKeep, which records it and says
// whether it was one. Everything else is returned as an error.
package meta
