// Package source is the source side of a copy, which every destination of
// one run shares whatever kind it is: the walk of the sources with the
// run's filters (Side.Walk), reads checked against the walk's stat
// (Side.Read), the hash cache's source half (Side.Cached, Side.Remember),
// and the share (Share) that lets several destinations read each source
// byte once. It imports nothing of copyengine; the local pipeline reads
// through the Share, and a destination of another kind through the Side.
//
// Lister is the one listing of a source directory that every walk of
// the sources asks, the local pipeline's included: opened through
// descriptors (following symlinks with -L, a loop through one refused),
// its names judged by the run's filters (Excluded, and the directory's
// own rule files' error), stat'd in inode order when the read order asks
// (PreStat), each name's stat with -L's rule for a missing target, and
// the hash cache's own file and journals left out (Own). The local walk
// pairs each Listing with the destination's; Side.Walk lists with the
// run's filters and -L.
//
// Side.Walk gives the sources with the run's filters, a directory before
// what it holds; Side.Read reads through the share, the file checked
// against the walk's stat before and after (a file replaced or changed
// meanwhile is refusal.ErrSourceChanged, never a copy); Side.Pass is done
// with a file unread; Side.Cached is a digest vouched for by a valid hash
// cache entry, and Side.Remember the entry of a file read.
package source
