package destfs

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// devInfo is what the run learns once about a filesystem (one st_dev): the
// identity of its volume, which binds hash-cache entries to it, and, for a
// destination filesystem, the resolution of the times it stores.
type devInfo struct {
	mu     sync.Mutex
	vol    hashcache.Volume // zero: no identity, the cache vouches for nothing there
	volSet bool             // vol was learned (from a directory on this device)

	resOnce sync.Once
	res     atomic.Int64 // timestamp resolution in ns, 0 until probed
	// modesLost: the resolution probe's file did not show the mode it
	// was created with (exFAT, FAT, ntfs-3g without a user mapping), so
	// permission bits are not compared there.
	modesLost atomic.Bool

	fold foldCache // how its directories compare names

	namesOnce sync.Once
	names     *NameRules // the names it cannot hold, learned once (namerules.go)

	rename renameProbe // whether a directory rename keeps its files (renameprobe.go)

	policyOnce sync.Once
	policy     hashcache.Policy // the hash-cache policy of its type (PolicyOf)
}

// devInfos maps st_dev to what is known of that filesystem.
type devInfos struct {
	mu sync.Mutex
	m  map[uint64]*devInfo
}

func (ds *devInfos) get(dev uint64) *devInfo {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.m == nil {
		ds.m = map[uint64]*devInfo{}
	}
	di := ds.m[dev]
	if di == nil {
		di = &devInfo{}
		ds.m[dev] = di
	}
	return di
}

// VolumeOf returns the volume identity of device dev, learning it through
// the directory d the first time. d must be on dev: Identify reports the
// device it looked at, and a directory on another one (a mount point, or a
// path changed meanwhile) teaches nothing about dev, which then has no
// identity for this call.
func (fi *Info) VolumeOf(d *fileio.Dir, dev uint64) hashcache.Volume {
	di := fi.devs.get(dev)
	di.mu.Lock()
	defer di.mu.Unlock()
	if di.volSet || d == nil {
		return di.vol
	}
	if info, err := hashcache.Identify(d.Path()); err == nil && info.Dev == dev {
		di.vol, di.volSet = info.Volume, true
	}
	return di.vol
}

// PolicyOf is the hash cache's policy for the filesystem dev by its type
// (hashcache.PolicyFor), d a directory on it: asked once per filesystem.
func (fi *Info) PolicyOf(d *fileio.Dir, dev uint64) hashcache.Policy {
	di := fi.devs.get(dev)
	di.policyOnce.Do(func() {
		t, _ := fileio.FSType(d.Path())
		di.policy = hashcache.PolicyFor(t)
	})
	return di.policy
}

// KnownVolume returns the volume identity learned for dev, zero if none.
func (fi *Info) KnownVolume(dev uint64) hashcache.Volume {
	di := fi.devs.get(dev)
	di.mu.Lock()
	defer di.mu.Unlock()
	return di.vol
}

// probeTime is the time the resolution probe sets: an odd second with
// nanoseconds 999,999,999, so that truncation to any resolution shows (to
// 2 s, the second becomes even).
const probeTime = 1_000_000_001*int64(time.Second) + 999_999_999

// resolutions are the time resolutions the probe can tell apart, coarsest
// first.
var resolutions = []int64{2e9, 1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 100, 10}

// TimeResolution returns the resolution of the times the destination
// filesystem dev stores, in nanoseconds: probed once per run in d (a
// directory on dev) and never finer than its type's policy says (a driver
// may keep a finer time in memory than it writes to the disk). Without a
// probe (dry run, a directory that takes no new file) the type's policy
// alone decides.
func (fi *Info) TimeResolution(d *fileio.Dir, dev uint64, policy hashcache.Policy) int64 {
	di := fi.devs.get(dev)
	di.resOnce.Do(func() {
		g := int64(policy.MtimeGranularity)
		if p := fi.probeResolution(d, dev); p > g {
			g = p
		}
		di.res.Store(max(g, 1))
	})
	return di.res.Load()
}

// ModesLost reports whether the filesystem dev was found not to keep
// permission bits (see devInfo.modesLost).
func (fi *Info) ModesLost(dev uint64) bool {
	return fi.devs.get(dev).modesLost.Load()
}

// KeepDirTimes returns a function that puts d's times back as they are now
// if a probe's create and remove in d moved its mtime meanwhile: a
// directory that was up to date stays so, whatever the resolution its
// times are compared at. Through d's descriptor, never a name.
func KeepDirTimes(d *fileio.Dir) func() {
	before, err := d.Stat()
	if err != nil {
		return func() {}
	}
	return func() {
		if after, err := d.Stat(); err == nil && after.Mtime != before.Mtime {
			_ = d.AsFile().SetTimes(before.Atime, before.Mtime)
		}
	}
}

// KnownResolution is the resolution TimeResolution found for dev, 1 when
// it was not asked.
func (fi *Info) KnownResolution(dev uint64) int64 {
	return max(fi.devs.get(dev).res.Load(), 1)
}

// probeResolution sets the mtime of a new file in d to probeTime through
// its descriptor, reads it back, and returns the coarsest resolution the
// result is a multiple of (1 when it came back whole, 0 when there was no
// probe). The file has no name where the filesystem allows that
// (O_TMPFILE), so that the probe changes nothing in the destination;
// elsewhere it is a temporary, removed at once, and the directory's times,
// which its creation moved, are put back, so that a directory that was up
// to date stays so.
func (fi *Info) probeResolution(d *fileio.Dir, dev uint64) int64 {
	if d == nil || fi.cfg.dry() {
		return 0
	}
	before, err := d.Stat()
	if err != nil || before.Dev != dev {
		return 0
	}
	var st fileio.Stat
	f, err := fileio.CreateUnnamed(d)
	if errors.Is(err, fileio.ErrUnsupported) {
		name := DigestTemp("fastcopy-time-probe", rand.Uint64())
		if f, err = fileio.CreateTemp(d, name); err != nil {
			return 0
		}
		defer func() {
			_ = d.Remove(name)
			if after, err := d.Stat(); err == nil && after.Mtime != before.Mtime {
				_ = d.AsFile().SetTimes(before.Atime, before.Mtime)
			}
		}()
	} else if err != nil {
		return 0
	}
	err = f.SetTimes(probeTime, probeTime)
	if err == nil {
		st, err = f.Stat()
	}
	if err == nil && st.Dev == dev {
		// The file was created with mode 0600: a umask or a default ACL
		// can only take bits away, so one that shows more has modes of
		// the driver's, not its own.
		if st.Mode&fileio.ModeBits&^0o600 != 0 {
			fi.devs.get(dev).modesLost.Store(true)
			fi.ModeKept(&st, 0o600) // said not kept, on reruns too
		}
	}
	f.Close()
	if err != nil || st.Dev != dev {
		return 0
	}
	if st.Mtime == probeTime {
		return 1
	}
	for _, g := range resolutions {
		if st.Mtime%g == 0 {
			return g
		}
	}
	return resolutions[0] // neither kept nor truncated: compare as coarsely as any
}
