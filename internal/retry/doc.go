// Package retry is the rule by which a file whose source fails to read is
// read again from its start (a flaky USB link, a card reader that hiccups)
// before it fails: which failures are worth another try (an I/O error in
// opening or reading the source file itself, SourceReadError; a write to
// the destination, or a refusal such as EACCES, is not), how many tries a
// file gets (Policy.Tries), how long each waits (Policy.Wait: doubling
// from Backoff up to BackoffMax, or until the run is cancelled), and the
// texts that report a retry and a file that failed on every one.
//
// Its input is Config (the retries the user asked for); its answers are
// verdicts and waits. It counts and reports nothing itself: the caller
// does, and reads the file again. It imports nothing of the project but
// internal/fileio (the errno of a failure).
package retry
