// Package scrub finds bit rot in a destination (--scrub): before the
// walk, Pass reads from the device (cached pages dropped first) the
// destination files the hash cache vouches for whose bytes were last read
// from the device longer ago than Config.Age (hashcache.Entry.ReadAt, zero
// for never), oldest first, within a byte budget: those a rerun would
// skip unread. A file that holds the digest its entry recorded gets its
// ReadAt renewed; one that does not, its stat being the one the entry
// holds, is rotten: its entry keeps the digest and is marked rotten
// (hashcache.Entry.Rotten), and it is noted in the Ledger.
//
// The Ledger is the run's list of rotten destination files, however they
// were found (by Pass, by an earlier run's mark, by --move or --link-dest
// reading a copy): the copy engine asks it whether a file it meets is
// rotten, tells it what became of each, and names them all at the end
// (Report). A rotten file is copied again only from a source that still
// holds the digest recorded for it (Settle); one whose source does not
// either is no known-good copy on either side, and fails with ErrRotten.
package scrub
