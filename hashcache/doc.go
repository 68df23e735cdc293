// Package hashcache remembers, per file, the xxh128 digest fastcopy computed
// and the stat fields it saw, so that a rerun can skip reading files that did
// not change. It is the only package of fastcopy that uses bbolt.
//
// It makes no system calls of its own: what a filesystem is (fileio.FSType)
// and which volume it is (fileio.IdentifyVolume) are probed by
// internal/fileio; hashcache decides what to trust of each (PolicyFor,
// Policy.Vouches) and digests a volume's identity into a Volume.
//
// # Contract
//
//   - One file, by default os.UserCacheDir()/fastcopy/hashes.db (DefaultPath),
//     keyed by absolute path as raw bytes (not necessarily UTF-8), shared by
//     every process that opens it. bbolt lets one process at a time write
//     a file and none read it meanwhile, so each open Cache holds the file
//     read-only, with a shared lock, for its life, and takes it alone only
//     for a commit: it lets the shared lock go, tries the exclusive one
//     once, commits, and opens the file read-only again; one that is the
//     only open Cache of the file (every Cache holds PATH.users shared,
//     fileio.Presence) keeps it open for writing from one commit to the
//     next, and lets it go within holdCheck once another opens. When another
//     process has the file open, the commit goes instead to a journal of
//     this process (PATH.j-<random>, a small bbolt file of the same schema
//     plus a bucket "deleted"), which it holds locked until Close and which
//     its lookups read before the file. Open, each commit and Close merge
//     the journals whose process has let them go (finished, or died) when
//     they have the file alone, at most mergeBudget entries at a time,
//     keeping per path the entry hashed last, and remove them; Close merges
//     in parts, letting the file go between parts. Open also reads the
//     finished journals it could not merge, so a process sees everything
//     learned before it started. Open waits Options.LockTimeout (at least a
//     second) only for a process that holds the file alone, an older
//     fastcopy or one stopped in a commit or a merge, and then fails with an
//     error wrapping ErrLocked (fileio.ErrLocked, the one sentinel for a
//     lock another process holds). The caller decides what that means:
//     fastcopy stops before it writes anything (exit status 5) and hints at
//     --no-cache or another --cache; it is any other failure to open that
//     fastcopy runs on without a cache from, with a warning. Clear does not
//     wait: a process that has the file open goes on with what it read, and
//     stores what it learns from then on in a new file.
//   - The cache is an optimisation and never a source of truth: a missing,
//     unreadable, truncated or foreign file is moved aside and replaced
//     (Open warns, see ErrCorrupt); each value carries a check over its key
//     and bytes, so a damaged entry reads as a miss, never as a wrong digest;
//     bbolt panics and faults on bad pages are recovered and stop the use of
//     the cache for the run.
//   - Whether an entry may be used is decided by Entry.Valid, a pure function
//     of the entry, the file's current stat and the filesystem's Policy
//     (PolicyFor, of the type fileio.FSType names): the same volume
//     (Identify; a volume without an identity has no valid entries), size
//     and mtime at the filesystem's granularity, inode and ctime, and git's racy-timestamp rule, applied
//     to the mtime and to a coarse ctime. On a filesystem without a change
//     time (Policy.Vouches: FAT, exFAT, NTFS, SMB, FUSE) no entry is valid.
//     The engine should set Entry.HashedAt to the time it started reading.
//   - An entry must describe data that is on stable storage: a caller Puts
//     an entry only after the file's data was flushed (fastcopy: a
//     destination file after the flush that precedes its rename, or after
//     the run's final flush for a file it found in place and read; with
//     --no-sync, never the latter). Otherwise a power cut could bring the
//     file back empty or zero-filled with the very stat the entry matches,
//     and the entry would vouch for bytes that are gone. The same holds for
//     a source: a file rewritten in place has its new stat in the journal
//     within seconds and its data in memory for longer, and a power cut of
//     the source brings back the old bytes under the new stat. fastcopy
//     Puts a source entry only after a syncfs of the source filesystem that
//     followed the read (one per filesystem per batch of entries; nothing to
//     write on an idle or read-only source), and drops it where that fails.
//   - Writes go through one writer goroutine that commits every 1,000
//     entries or 200 ms, whichever comes first, in key order, each commit
//     synced, to the file or to the journal; batches that waited for it
//     together (many Puts at once) are one commit. A crash loses at most what
//     was not committed yet, and leaves a journal the next process merges (a
//     merge cut short is merged again: it keeps the entry hashed last);
//     Flush and Close wait for the commit and report its error. Lookups
//     wait for a commit, which lets the file go for its duration.
//
// # Schema
//
// Bucket "meta" holds "version" (uvarint, now 1); bucket "files" maps a path
// to an entry encoded with varints (see encodeValue). A journal has the same
// buckets and "deleted", which maps a removed path to the time of its
// removal (8 bytes, big endian, nanoseconds since the epoch). Fields are appended to
// values without a version change (the volume was, so an entry from before
// it decodes with no volume and is never valid); a newer version number means a layout
// this code cannot read, and such a cache is left alone and not used for the
// run (ErrNewerSchema) rather than thrown away: the user may go back to the
// newer fastcopy, and two versions in turn must not destroy each other's
// cache.
package hashcache
