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
// either is no known-good copy on either side, and fails with ErrRotten,
// both sides left.
//
// Its input is Config: the age and the budget (--scrub-max; the first file
// due is read even when larger), the dry run (which reads and notes but
// puts no entry), the cache, the open destination root and its key prefix,
// the run's policy and volume answers, the buffer and the read sink
// (bandwidth limit, cancellation); Pass returns the files and bytes read.
// copyengine's glue (scrub.go) builds Config from Options, counts those
// into the summary and turns each ledger entry into a rotten line and
// event.
package scrub
