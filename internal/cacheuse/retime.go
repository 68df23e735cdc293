package cacheuse

import (
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/source"
)

// Retime gives a destination file (name in d) that holds its source's
// content the source's times atime and mtime, keeping what the cache may
// record of it true: it returns the file's stat afterwards, which the
// digest taken or found valid with the stat vouched holds for, or false
// where the file was changed instead, or may have been (it is then
// copied).
//
// A file with other names (a dedup link, a cp -al snapshot) is not changed:
// the times are its other names' too. The times are set through a
// descriptor of the file (a fileio.Node), which must still be as vouched
// for just before; the stat returned is taken through it just after and
// must show only the change made (its mtime compared at the resolution
// gran); and where the platform can watch the file (inotify) no write may
// have completed in between. A write meanwhile makes the file copied
// instead, never recorded with a digest of what it held before.
func Retime(d *fileio.Dir, name string, vouched *fileio.Stat, atime, mtime, gran int64) (fileio.Stat, bool) {
	if vouched.Nlink > 1 {
		return fileio.Stat{}, false
	}
	n, err := d.OpenNode(name)
	if err != nil {
		return fileio.Stat{}, false // copied instead
	}
	defer n.Close()
	// A write that lands between the check below and the utimes would
	// have its mtime replaced by the source's, and the stat could not
	// tell: where it can, the file is watched for writes meanwhile.
	written, watched := n.WatchWrites()
	if before, err := n.Restat(); err != nil || !before.IsRegular() || before.Nlink > 1 || source.Changed(vouched, &before) {
		if watched {
			written()
		}
		return fileio.Stat{}, false
	}
	if err := n.SetTimes(atime, mtime); err != nil {
		if watched {
			written()
		}
		return fileio.Stat{}, false
	}
	st, err := n.Restat()
	if watched && written() {
		return fileio.Stat{}, false
	}
	if err != nil || st.Size != vouched.Size || st.Nlink > 1 || !hashcache.SameTime(st.Mtime, mtime, gran) {
		return fileio.Stat{}, false
	}
	return st, true
}
