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
// Its whole input is Config: the flags, how to open a directory, DEST's
// root as the run opened it, the source directories the run went
// through, and the callbacks through which it reports what it removed,
// failed or read again. It imports nothing of copyengine: the engine
// notes each entry as its outcome is known (Source, Note), calls Finish
// after the final flush and Flush after its own, and counts and emits
// what the callbacks tell it.
package move
