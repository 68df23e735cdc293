// Package throttle is --bwlimit: one token bucket per run, shared by every
// worker, charged with the file content the run moves, reads and writes
// together:
//
//   - reads: the sources as they are copied or hashed, the read-backs (of
//     the committer, of a large file as it is written, of --verify=cache),
//     the destination files hashed to decide, the dedup targets read again
//     and the bytes compared (--dedup-verify=bytes), a resumed temporary;
//   - writes: the data written to the temporaries (the zeros of a sparse
//     file's holes are not written, so not charged);
//   - a clone (FICLONE, a dedup clone) and a copy_file_range move bytes
//     inside the kernel: each byte they move is charged once as read and
//     once as written (Meter.Moved), and copy_file_range is called in
//     pieces of at most the bucket's burst (Meter.Pieces), so that no call
//     runs past the limit.
//
// Each charge is waited for before the next piece of I/O of the same file,
// after the piece it is for: the rate holds over time, a piece at a time.
// The package makes no system call and knows nothing of the copy: its
// callers say what they moved.
//
// Its input is Config: the limit in bytes per second, or a throttle of the
// caller's own. A run without a limit has a nil *Meter, which lets every
// charge through.
package throttle
