// Package linkdest makes snapshots (--link-dest, rsync's meaning): a file
// to be copied whose counterpart at the same relative path under one of
// the directories has the same content and the metadata the copy would
// have becomes a hard link to that counterpart.
//
// Open resolves and opens the directories (Config); Candidate finds a
// file's counterpart, a regular file of the copy's size, mode, owner and
// mtime (Want), its directory opened below the --link-dest root without
// following symlinks; Digest establishes the counterpart's content by
// reading it from the device, its cached pages dropped first, whatever
// its hash-cache entry says, since the link shares its bytes and an entry
// vouches for a stat, not for bytes (a counterpart whose valid entry
// records another digest is rotten: named, marked, not linked to); Link
// makes the link under a temporary name, checks that it leads to the
// inode whose digest was established, unchanged (and, where the platform
// can watch it, not written meanwhile), and renames it onto the final
// name. Find is the search (find.go): the directories in order, the first
// counterpart whose digest is the source's, with the same extended
// attributes and on the destination's filesystem, handed to the caller to
// link, and why the file is copied when one matched but could not be
// linked. The source's digest, the extended attributes' comparison and
// what a link counts as are the caller's (Query): the package answers with
// facts and errors.
//
// Open takes a relative directory from the destination, as the kernel
// resolves it (Path), and notes those it cannot open; Link calls the
// caller's Place.Before and Place.After around the temporary (the run's
// record of what it made). Its input is Config: the directories, the
// destination, the dry run, the hash cache, and the run's device read,
// volume and modes-lost answers. It returns facts (a Read; a Linked: the
// stat linked, the reason to copy instead, or the file's failure) and
// never counts, reports or fails a file. copyengine's glue (linkdest.go)
// keeps what is bound to the pipeline's entry: the source's digest (from
// the entry's cache lookup, or read), the summary and events, the further
// names (linkGroup) and --move. LinkChecked, the hard
// link checked to lead to the inode verified, is also what dedup and the
// further names link with.
package linkdest
