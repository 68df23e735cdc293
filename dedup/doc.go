// Package dedup decides when identical content is written once and shared:
// cloned (reflink: the files stay independent) or hard-linked (one inode).
//
// The Index holds, per file size, the digests of the files a run has
// written. A file whose size no other file shares cannot be a duplicate and
// is copied in one pass, hashed as it streams; only a file whose size
// collides is hashed before the write decision. Because copies run in
// parallel, a file whose size collides waits until every file of that size
// already being written has registered its digest, so that identical files
// are written once even when they reach two workers at the same moment.
// What a written file owes the Index when its copy ends is a Write, settled
// by End. The files the destination held before the run come from the hash
// cache (DestContent), offered once, before the first file is written.
//
// What a duplicate becomes is decided from Dest, the destination's
// capabilities and the run's settings as data: a clone where it clones, a
// hard link where the preserved metadata is the same, otherwise a copy.
//
// The Index never decides that a link is safe on its own: a Proof shows
// that a target still holds the bytes before it is shared (its identity as
// it was verified, its content read again where this run did not write and
// verify it, a byte comparison under --dedup-verify=bytes), and the caller
// falls back to a plain copy when the proof fails.
//
// A dry run asks a Forecast instead of the Index: it takes the same
// decisions (the same Dest, hashing the files whose size collides, the
// same proof of what DEST holds, given as a Confirm) and writes nothing.
//
// Inputs are data and callbacks (opening a destination directory, hashing
// a source); the package makes no decision of the copy pipeline's and acts
// on nothing but the files it is handed: Place makes the clone or the link
// under the duplicate's temporary name, from the target as proven (a
// target replaced meanwhile is never shared), and the caller renames it
// and reports the outcome.
package dedup
