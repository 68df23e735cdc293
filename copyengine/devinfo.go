package copyengine

import (
	"sync"

	"github.com/fastcopy/fastcopy/copyengine/fileio"
	"github.com/fastcopy/fastcopy/hashcache"
)

// devInfo is what the run learns once about a filesystem (one st_dev): the
// identity of its volume, which binds hash-cache entries to it.
type devInfo struct {
	mu     sync.Mutex
	vol    hashcache.Volume // zero: no identity, the cache vouches for nothing there
	volSet bool             // vol was learned (from a directory on this device)
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

// volumeOf returns the volume identity of device dev, learning it through
// the directory d the first time. d must be on dev: Identify reports the
// device it looked at, and a directory on another one (a mount point, or a
// path changed meanwhile) teaches nothing about dev, which then has no
// identity for this call.
func (e *engine) volumeOf(d *fileio.Dir, dev uint64) hashcache.Volume {
	di := e.devs.get(dev)
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

// knownVolume returns the volume identity learned for dev, zero if none.
func (e *engine) knownVolume(dev uint64) hashcache.Volume {
	di := e.devs.get(dev)
	di.mu.Lock()
	defer di.mu.Unlock()
	return di.vol
}
