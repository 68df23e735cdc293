// Package records collects, over a run, the files the run lists in its
// records, and writes those records once the copy is in place: a
// manifest (xxhsum or coreutils lines), the next generation of DEST's ASC
// MHL history (through internal/mhl), a BagIt bag's tag files (through
// internal/bagit). It also computes, in the same pass over each source's
// bytes as the copy's own xxh128, the digests in the other formats the
// records ask for (Hashes).
//
// Its input is data: a Set of Listed files (each path below DEST, its
// xxh128 and its other digests; a path listed twice counts with its last),
// and for each writer a struct of data that is its whole input: Manifest
// (path, format, no-sync), MHL (DEST's held directory and path, formats,
// the directories of the run, the tool version), Bag (the payload's held
// directory, the bag's path, format, bag-info fields, the name to pass
// over), and Flushes (OnFlush, and whether there is a flush to wait for).
// It never decides what a run copies and imports nothing of copyengine; a
// writer returns facts (what it wrote, the files it could not list, as
// Failures, which the engine fails by name) and an error; the engine
// counts and reports them.
package records
