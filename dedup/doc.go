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
//
// The Index never decides that a link is safe on its own: callers confirm
// that a target still holds the bytes (its stat unchanged since it was
// verified, or a byte comparison) before sharing it, and fall back to a
// plain copy when the confirmation fails.
package dedup
