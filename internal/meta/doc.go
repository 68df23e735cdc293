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
//
// It owns: the owner a copy is given (Config.Owner: all of it as root,
// else the group where the process is a member), its mode (Mode: setuid
// and setgid dropped when the owner is not kept), the mode a file is
// created with (Config.CreateMode), the owner, extended attributes and
// mode applied through the copy's descriptor (Config.Apply), and for an
// unchanged entry what it should have (Config.Wanted) and the fix through
// a descriptor of the inode the walk found (Config.Fix, ErrReplaced when
// it was replaced; Config.FixIn opens that descriptor). Besides CannotKeep, Config carries ModeKept, which
// checks that a mode set shows, and ModesLost, which says a filesystem
// keeps no modes (then they are not compared).
//
// The directory pass (Config.ApplyDirs) gives the directories a run made
// or went through their source's metadata and times last, deepest first
// (Deeper), each left alone when it is still staged or already up to
// date; it reaches them through a DirAccess, the run's own handles.
//
// copyengine builds the Config from its engine (copyengine's metaConfig),
// and hands it to internal/transfer for the copies it writes; its
// committer keeps the list of directories the walk met and gives it to
// ApplyDirs with a DirAccess that opens them through the stager and the
// walker.
package meta
