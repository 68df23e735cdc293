// Package destlock keeps two runs out of one destination tree: a run
// locks its destination root exclusively and every directory above it
// shared (flock on directory descriptors), so a run into a directory
// above, below or at another run's destination is refused with
// refusal.ErrLocked, and no run ever removes another's temporaries or
// staged directories as its leftovers. Make creates a missing destination
// root and its parents without entering another run's tree. Every
// directory is reached through descriptors, from the one the caller
// opened; the package changes nothing above the destination but the
// directories Make creates.
//
// Make creates a missing destination under these locks and Lock takes
// them on the destination's descriptor. Their input is that descriptor,
// the destination's path (for messages and the walk up) and how long to
// ask again for a lock found held (BusyFor, for a destination that existed
// when the run was planned, without --delete); each returns either the
// locks held or refusal.ErrLocked holding nothing.
package destlock
