// Package durable makes a batch of written files durable and proves them
// from the destination: the flush and the read-back of copyengine's
// committer, with their input as data.
//
// Flushing: a Filesystems is the set of filesystems a run writes in, each
// with a directory it is flushed through. Flush makes a batch of files
// (File: its directory, its name, its filesystem) durable with one syncfs
// for each filesystem the batch wrote in; where a filesystem has no flush
// of its own that waits, each file on it is fsynced instead (SyncFile). It
// answers per file: durable, or the error that failed it, and per
// filesystem what its flush answered. FlushAll makes renames and directory
// metadata durable on every filesystem the run wrote in at its end.
//
// Reading back: a Config is the run's whole input to its read-backs (the
// run's context, whether pages must come from the device, the budget of
// descriptors opened ahead, the --bwlimit sink, the counters). A Temp is
// one temporary to read back: its name, its size, the digest of its
// source and the inode written. Groups cuts a flushed batch into the
// groups a Pool's workers take; Prefetch drops a group's cached pages and
// asks the device for them all at once; ReadBack hashes a temporary from
// the device (or the page cache) and answers nil (it holds what its source
// held: the inode read is kept open in its Kept), a *refusal.Mismatch, or
// the error that stopped the read. Check is ReadBack (unless the file was
// read back as it was written) followed by the source's times, set through
// the inode read; Verify is Check with the one recopy a mismatch gets
// (the caller writes, Verify flushes that file alone and checks it again).
// Placed answers, after the caller's rename, whether the final name leads
// to the inode verified, and that inode's stat.
//
// Kept is what a temporary keeps open on its way to its final name (the
// descriptor of its write, the one opened ahead for its read-back, the
// inode read back), each counted against a Budget when it was opened
// ahead; Close closes them all before the temporary's name is removed.
//
// It guarantees: nothing is read back before it was flushed (the caller
// reads back only what Flush answered durable); a temporary swapped for
// another file after it was written is a mismatch, never read as the copy;
// a name that leads to another inode after the rename is a mismatch too;
// every descriptor taken from a Budget is given back when closed. It makes
// no system call of its own: everything goes through internal/fileio. The
// protocol around it (the batches, renaming onto the final name, reporting
// outcomes) is the caller's.
package durable
