// Package transfer writes one regular file's copy under its temporary
// name: rclone's per-file copy in fs/operations, a Transfer whose steps
// are methods (create, transfer, finish).
//
// Its input is a Config, the run's whole contract with it (what is known
// of cloning per device, the --reflink and --verify modes, the --bwlimit
// meter, the run's counters, the record of what runs made in the
// destination, the metadata of a copy, and the few answers only the run
// has, as functions), and a Job: one file's open source, its stat, the
// destination directory, the temporary's name and a buffer.
//
// It creates the temporary (O_EXCL, in place of a leftover the record
// names, or taking up one an earlier run kept: Resume), moves the bytes
// down the ladder (FICLONE, copy_file_range, a read/write stream that
// hashes as it reads), starts a large file's flush and read-back as it is
// written (streamCheck), checks that the source held still while it was
// read (Settling, ChangedSince), and gives the copy its source's metadata
// (internal/meta). It answers with a Result: the action, the source's
// digest, the size, the inode written, whether the copy was read back
// already, and the descriptors kept open for the read-back; or with an
// error, ErrChanged when the source moved.
//
// It guarantees: nothing is written through a name that can be swapped
// (the temporary is created exclusively and everything after goes through
// its descriptor); a temporary that did not finish is removed unless the
// run is stopping and the next can take it up (Config.KeepsTemp); what is
// taken up is never trusted (every byte is compared with the source's); and
// only a leftover the record of what runs made names is removed in the
// way of a create.
//
// Also here: the copy of a symlink, FIFO, socket or device
// (Config.MakeSpecial), the per-device memory of whether cloning works
// (Clones), and the rule of when a source's read can be trusted
// (AwaitSettled, Settling) and of the second look at one that changed
// (Again), and the read of a source for its digest before the decision to
// write it (ReadSource: a duplicate's, held by that same rule).
//
// It makes no system call of its own: everything goes through
// internal/fileio, on the directories and files it is handed, so the
// faults a test build attaches to a run's directories (fileio.FaultSet)
// reach its transfers too. It is only called to write: the dry run's gate
// is the caller's, before a transfer is made.
package transfer
