// Package staging makes the new directories of a run under temporary
// names and puts each in place, by one rename, once what was written in
// it is complete.
//
// A directory the run creates is made under a hidden name (its temporary
// name, ".NAME.fastcopy-tmp") and its files are written straight under
// their own names inside it. Once every file written there is verified and
// durable, or has failed and been removed, and the duplicates and further
// hard-link names that belong in it are placed (they are counted on the
// stage too), the directory is renamed onto its own name: one rename for
// the directory instead of one per file, which is about a sixth of the
// work of copying many small files. No file shows under its final path
// before it is complete, since the whole directory is out of sight until
// then.
//
// A subdirectory is staged on its own, inside its parent, so a directory
// is held back only for its own files. Only a directory whose files are
// few and small enough to be lost and copied again cheaply is kept staged
// (the copy engine's limits, and no file large enough for its temporary
// to be kept for a rerun: see transfer.Resume): a run killed or a machine
// that loses power leaves a staged directory behind, and the next run
// removes it with everything in it (RemoveTree), as it removes a temporary
// file. A larger directory is renamed into place as soon as it is listed,
// before any file is written in it, and its files take temporary names as
// usual. A run that stops (Ctrl-C, a fatal error) puts every staged
// directory in place (Left, Publish) once its workers have removed what
// they did not finish.
//
// A writer of the destination can rename or exchange the temporary name
// (renameat2 RENAME_EXCHANGE) at any moment, to have a directory of their
// choosing published under the final name, or to have the run's files
// written into it. A Stage therefore remembers the directory it made, by
// device and inode, from a descriptor opened right after mkdir (and found
// empty and the process's own: Adopt); every open of the directory, or of
// one below it, goes through a descriptor checked to be that directory
// (OpenDir), and the rename that publishes it is checked on both sides:
// the temporary name must hold it before, the final name after. What was
// placed in it is reported (Report: counted, cached, listed as verified)
// only once it is published, and what was placed in its subdirectories
// published inside it only once it is: a stage that cannot be put in
// place, or whose name was made to hold another directory, fails with one
// *PublishError that names the directory and says how many files in it
// are not in place (ErrReplaced when its name was made to lead elsewhere);
// nothing in it is then reported.
//
// Its input is Config: the destination root every path is taken below,
// the record of what runs made there (internal/made), and the process's
// user. The Stager maps the path of each directory still under its
// temporary name to its Stage, under its own lock: directories are opened
// and renamed with it held, so a path is never resolved across a rename.
// How many files are still being written into a stage (its settling) is
// the caller's: it publishes the stage when the last one is done.
package staging
