// Package cacheuse is a run's use of the hash cache (package hashcache,
// the only one that touches its file): what the cache vouches for, asked
// before deciding, and what the run records in it, and when.
//
// Lookup answers, for one directory's files whose destination is a
// regular file of the same size, what the cache vouches for of each side
// (Answer): a digest whose entry is valid for the file as it is now, by
// the validity policy of its filesystem (hashcache.Policy), on the volume
// the file is on now. It changes nothing: the copy engine's decider
// decides with the answers, and notes what --scrub's ledger must know.
// Where either side keeps no change time the cache vouches for no content;
// where only DEST keeps none, the source's own entry tells whether the
// source changed since it was last read (Answer.Moved). Under --move a
// destination entry never vouches for bytes (Answer.MoveRec): the copy is
// read from the device before its source is removed.
//
// Compare decides with an Answer, for a destination file as large as its
// source, whether it holds the source's content (Holds), does not
// (Differs), or whether both must be read to know (Unsure): both entries
// valid and equal, else the rsync rule (same size and mtime at the
// coarser resolution) unless --checksum or a record listing digests
// wants both read. It changes nothing either.
//
// The Recorder stores what the run learned, with its own lock, and
// guarantees that no entry describes data that a power cut could still
// take back: a source's entry (Source) is held until a syncfs of its
// filesystem, through a directory the walk noted (NoteSource), and
// dropped where that flush fails; a destination file's entry is stored at
// once only when the run flushed the file itself (Dest), else held until
// the run's final flush (DestLater, StoreFlushed). A dry run, an empty
// file or a volume without a known identity stores nothing.
//
// Check settles a file whose size matches its destination but whose
// sameness the stats and the cache could not decide: it takes each side's
// digest from the cache where its entry vouches, else reads it (the
// destination from the device under --move, ReadDest), and finds, under
// --move, a copy that does not give the digest its entry recorded rotten
// (Checked.RottenByMove). It answers what it found, and the caller
// records, counts and decides. Retime gives a file kept in place its
// source's times only while it stays the file its digest holds for, so
// that the stat recorded with that digest shows nothing but that change.
//
// Known answers digests for a tree comparison (fastcopy verify) by the
// same rules as Lookup.
//
// Its input is data: Config, the run's (the cache, the run's answer to a
// filesystem's volume identity, --move, and the dry run's gate), with a
// Query per directory, a Pair per file compared and a Check per file
// read. It imports hashcache, verify, internal/fileio and internal/source (the
// rule by which a file changed), and nothing of copyengine.
package cacheuse
