// Package update is the rule of --update and --ignore-existing: whether a
// source entry's destination is left as it is (Keeps). Such an entry is
// skipped whole by the caller: neither its data nor its metadata is
// touched.
//
// Its input is Config (the two options) and, per entry, the two stats
// and the mtime granularity both filesystems keep; its answer is a
// verdict, and it changes nothing. It imports nothing of the project but
// internal/fileio (the Stat it compares).
package update
