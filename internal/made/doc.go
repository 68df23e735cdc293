// Package made keeps the record of what runs made in a destination root,
// the file ".fastcopy-made" (Name): the proof by which a run takes a
// leftover for its own and removes, resumes or leaves it out of --delete.
//
// What a run may remove as its own leftover is what a run made: a name
// alone proves nothing. A source file can be called ".IMG_1.jpg.fastcopy-tmp",
// and its copy in the destination is the user's file like any other; and
// FAT and exFAT keep no extended attribute that could mark a temporary. So
// each run writes down, in a small file of the destination root
// (Name), every temporary file and staged directory it creates there,
// by its path below the root (and its inode number, which is checked where
// the filesystem keeps inode numbers from one mount to the next). A later
// run into the same root removes, resumes or leaves out of --delete only
// an entry that the record names, of the type it names, with the inode it
// names where that can be known; anything else that merely looks like a
// temporary is the user's: it is copied over only when the source names
// it, deleted only by --delete as any other extra, and otherwise left
// alone and reported (ActLeaveTemp); the copy of a file beside it takes
// another temporary name.
//
// The order is what makes this safe. A temporary is named in the record,
// durably (one fsync of the record serves every creation waiting for it:
// see Before), and only then created, O_EXCL, so that nothing of anyone
// else's was in its place; its inode number and type are added once it
// exists, and a creation that failed drops the name again (durably when
// the name was found taken). A power cut thus never leaves a leftover the
// record does not name, and a name the record holds that the next run
// finds holding something else (read when the run starts: a name no
// longer there, or holding another type or inode) is dropped from the
// record; so is a recorded name that the run is about to copy a source
// file to, durably (fsync) before that copy is placed. The run holds the
// destination's lock (internal/destlock), so no other run writes the
// record meanwhile. When the run ends, the record keeps only what is still there (a temporary kept for
// the next run to take up, a staged directory that could not be put in
// place), and is removed when that is nothing.
//
// A run into a directory below the root reads only its own root's record:
// a leftover of a run into the parent is left alone there (and reported),
// and removed by the next run into the root that made it. --no-cache
// changes nothing here: the record is not part of the hash cache.
//
// The record's own name is reserved in the destination root: a source
// file that would be copied onto it fails (ErrName) and, under --move,
// is kept.
//
// Its whole input is Config: the destination root the run opened and
// locked, its path, the dry-run and no-sync flags, the run's user (a
// record of another's is not read), and the callbacks through which it
// reports a nested record it removed (the engine emits clean-tmp) and
// puts the root's times back. It imports nothing of copyengine: the engine
// asks it (Ours, Recorded, Leftover: whether a taken name is a leftover a
// create may remove, Own: whether --delete leaves an entry to the walk)
// and tells it (Intend, Before, After, Made, Disown, Gone, Clear: remove
// a leftover before a create), and emits the events.
// Of the project it imports internal/fileio and internal/destfs (which
// names are temporaries').
//
// Record.Pair applies this to an existing destination directory that a
// run is about to write in: paired with the source's names, it answers
// the stat of the names the source's entries get there, the leftover
// temporaries of source files that a resume takes up, and the other
// entries named like temporaries, each a run's to remove or the user's
// to leave; the caller acts.
package made
