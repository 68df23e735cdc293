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
package readorder
