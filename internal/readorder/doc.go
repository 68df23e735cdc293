// Package readorder is the order in which a run reads its source files
// (--order): the choice of an order for a source's device (Choose), and
// the orderings themselves, each a pure function of what the walk learnt
// of the files: a window of pending files handed back in disk order (the
// place of their first data), inode order or listing order (Window), the
// window with its dispatch in chunks and its read-ahead budget (Queue),
// the walk's queue of directories to list, by inode number in those
// orders (Dirs, DirQueue), the order to stat a directory's names in
// (StatOrder), and the bound on the
// directories a window keeps open (WindowDirs). It makes no system call
// but fileio.DeviceOf's look-up of the source's device in Choose; the
// caller gives each file's key (fileio PhysicalStart, the inode, the
// listing position) and sends the files where they go.
//
// Order is the value of --order (copyengine.ReadOrder by alias). Each
// ordering is computed from what the caller gives it and nothing else: a
// Window takes pending files in listing order, each with its Key, and
// hands back a full window sorted, the same whatever order ties arrived
// in; a DirQueue gives back directories by inode number. A Queue, with
// its own lock, cuts each sorted window into chunks of neighbours (Same),
// has each file asked for ahead (Ask) while the bytes asked for and not
// yet read stay within AheadBytes, a large file holding back what follows
// it, and hands each chunk on (Send). What stays in copyengine
// (readorder.go, readQueue) is what a file is there (its directories'
// references, its entry), how it is opened ahead and where a chunk goes:
// the copy workers' channel.
//
// In disk and inode order the walk reads the source's metadata first and
// its data after, each in the order it lies on the disk:
//
//   - the walker lists one directory at a time, the directory of lowest
//     inode number first (Dirs), and stats each directory's names in
//     inode order (the listing's d_ino, StatOrder), so that the inode
//     tables are read in one sweep;
//   - the regular files that need work are not sent to the copier as they
//     are listed but held in a window (Queue, Window), with the place of
//     their first data (disk order: fileio PhysicalStart, asked while the
//     walk is among the file's metadata anyway), their inode and their
//     listing position;
//   - only when the window is full, or the walk is over, is it sorted and
//     handed to the copy workers in that order, in chunks of neighbours
//     that share a source directory and a destination directory, so that
//     a worker's look-ahead (prefetch) asks for files that lie side by
//     side on the disk.
//
// Everything after the read (the destination's writes, flushes,
// read-backs, renames, staged directories published when their last file
// is done) is unchanged. The window holds a reference to each directory
// its files are in; it is flushed early when it holds WindowDirs
// directories, so that the descriptors it keeps open stay within the
// process's limit.
package readorder
