// Package readorder is the order in which a run reads its source files
// (--order): the choice of an order for a source's device (Choose), and
// the orderings themselves, each a pure function of what the walk learnt
// of the files: a window of pending files handed back in disk order (the
// place of their first data), inode order or listing order (Window), the
// queue of directories to list by inode number (DirQueue), the order to
// stat a directory's names in (StatOrder), and the bound on the
// directories a window keeps open (WindowDirs). It makes no system call
// but fileio.DeviceOf's look-up of the source's device in Choose; the
// caller gives each file's key (fileio PhysicalStart, the inode, the
// listing position) and sends the files where they go.
//
// Order is the value of --order (copyengine.ReadOrder by alias). Each
// ordering is computed from what the caller gives it and nothing else: a
// Window takes pending files in listing order, each with its Key, and
// hands back a full window sorted, the same whatever order ties arrived
// in; a DirQueue gives back directories by inode number. What stays in
// copyengine (readorder.go, readQueue) is the dispatch of a sorted window
// to the copy workers and the read-ahead it asks for: that is the
// workers' own look-ahead budget, part of the pipeline's concurrency
// protocol rather than an ordering.
package readorder
