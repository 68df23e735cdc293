package durable

import (
	"sort"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Filesystems maps every filesystem the run writes in to a directory on
// it, through which it is flushed: DEST's own, and any mounted inside DEST
// (a disk mounted at DEST/photos is written by the same run, and a syncfs
// of DEST's filesystem flushes nothing of it). The zero value is empty.
type Filesystems struct {
	mu  sync.Mutex
	m   map[uint64]*fileio.Dir
	own []*fileio.Dir // opened here, closed by Close
}

// Add notes that dev is written through the directory d. The first
// directory seen on a filesystem is kept (opened again when dup, since the
// caller closes its own).
func (f *Filesystems) Add(dev uint64, d *fileio.Dir, dup bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.m[dev]; ok {
		return
	}
	if dup {
		again, err := d.OpenSub(".")
		if err != nil {
			return // its files are flushed one by one (Flush)
		}
		f.own = append(f.own, again)
		d = again
	}
	if f.m == nil {
		f.m = map[uint64]*fileio.Dir{}
	}
	f.m[dev] = d
}

// Dir returns the directory dev is flushed through.
func (f *Filesystems) Dir(dev uint64) (*fileio.Dir, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.m[dev]
	return d, ok
}

// All returns every filesystem noted, in a stable order.
func (f *Filesystems) All() []*fileio.Dir {
	f.mu.Lock()
	defer f.mu.Unlock()
	devs := make([]uint64, 0, len(f.m))
	for dev := range f.m {
		devs = append(devs, dev)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	out := make([]*fileio.Dir, len(devs))
	for i, dev := range devs {
		out[i] = f.m[dev]
	}
	return out
}

// Others returns the filesystems noted that are not in done.
func (f *Filesystems) Others(done map[uint64]error) []*fileio.Dir {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rest []*fileio.Dir
	for dev, d := range f.m {
		if _, ok := done[dev]; !ok {
			rest = append(rest, d)
		}
	}
	return rest
}

// Close closes the directories Add opened and forgets every filesystem.
func (f *Filesystems) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.own {
		d.Close()
	}
	f.own, f.m = nil, nil
}
