// Package outcome is the one way a run says what became of an entry: it
// reached its final name (placed), was found unchanged (skipped, or fixed
// when its metadata was brought up to date), became a further name of an
// inode placed before (linked), failed, or was removed. An Outcome is
// the whole of what is known of it at that moment (its path below the
// destination, size, digests, the destination file as it now is); a Hub
// hands each one to every listener subscribed to it, in the order they
// subscribed: the summary's counts, the events of the audit log, the
// records (manifest, ASC MHL, bag), the hash cache.
//
// It is also the vocabulary of what a run reports and how it is summed:
// the Action and Event each outcome is reported as (EventOf), the live
// Stats, and the Summary with its Failures, whose per-kind counts only
// Summary.Add adds to. An Action has a dry run's name (Action.Would) and
// back (Action.Real); (*Summary).Add(o, verified) is what an outcome adds
// to the counts, EventOf(o) the event it is reported as; the Summary also
// reports its VerifyMode. copyengine re-exports each of these names by
// alias (copyengine.Summary, copyengine.ActCopy, ...), and their JSON is
// the --json output's.
//
// Its input is the Outcome alone. It guarantees the order, that every
// listener hears every outcome, and that a summary's counts are those of
// the outcomes added to it.
//
// It imports nothing of the project but verify, internal/fileio,
// internal/refusal (the error texts of a Failure), internal/pathjson and
// internal/readorder (the read order a Summary reports).
package outcome
