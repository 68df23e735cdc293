package dedup

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
)

// DestMin is the smallest file the destination's earlier content is
// offered for: below it, the saving is less than the bookkeeping.
const DestMin = 4096

// DestContent is where the files the destination already holds are known
// from: the hash cache's entries for them, recorded when they were
// verified. It is the whole input of Targets.
type DestContent struct {
	Cache *hashcache.Cache // nil: nothing is known
	// Side is the destination root's cache side; without CheckInode in its
	// policy an entry cannot tell the file it describes, and none is offered.
	Side hashcache.Side
	// Dev and Volume are the destination's device and volume identity; a
	// zero Volume offers nothing (an entry could describe another volume's
	// file).
	Dev    uint64
	Volume hashcache.Volume
	// Resolution is the destination's timestamp resolution as the run
	// learned it, in nanoseconds: an entry hashed within it of its last
	// write is racy and not offered.
	Resolution int64
}

// Targets hands add each file the destination holds as the hash cache
// recorded it, as an External target in place with the recorded stat: a new
// file with the same content is cloned or linked from there once its stat
// (and its bytes) are confirmed. Files under DestMin and racy entries are
// left out. It stops when ctx is done.
func (dc DestContent) Targets(ctx context.Context, add func(*Target)) {
	if dc.Cache == nil || !dc.Side.Policy.CheckInode || dc.Volume == 0 {
		return
	}
	prefix := dc.Side.Abs + string(filepath.Separator)
	pol := dc.Side.Policy
	pol.MtimeGranularity = max(pol.MtimeGranularity, time.Duration(dc.Resolution))
	dc.Cache.Range(prefix, func(p string, ce hashcache.Entry) bool {
		if ce.Volume != dc.Volume || ce.Size < DestMin || ce.Racy(pol) {
			return true
		}
		t := &Target{Rel: filepath.ToSlash(p[len(prefix):]), Sum: ce.Sum, Size: ce.Size, External: true}
		t.Done(true, Placed{Dev: dc.Dev, Ino: ce.Ino, Size: ce.Size, Mtime: ce.Mtime, Ctime: ce.Ctime})
		add(t)
		return ctx.Err() == nil
	})
}
