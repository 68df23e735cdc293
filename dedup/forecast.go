package dedup

import (
	"sync"

	"github.com/fastcopy/fastcopy/verify"
)

// Forecast is a dry run's stand-in for the Index: it answers how the real
// run would place each file, written or sharing the data of a file before
// it, without writing anything. It holds the files the dry run would write,
// by size, each hashed only once another file of its size comes (as the
// real run hashes only files whose size collides), and the files DEST
// holds already, loaded at the first file as the real run loads them. It
// is safe for concurrent use; Place is serialised.
type Forecast struct {
	// Load hands add the files DEST holds already (DestContent.Targets);
	// nil for none.
	Load func(add func(*Target))

	mu     sync.Mutex
	bySize map[int64][]*Planned
	dest   map[int64][]*Target
	loaded bool
}

// Planned is a file a dry run would write, which later ones may share.
type Planned struct {
	Size int64
	Meta Meta // what a hard link to it would share
	// Hash reads the file's source for its digest: at its own Place when
	// a file of its size came before it, or, kept (after its own Place),
	// when one comes after it; until it succeeds.
	Hash func(kept bool) (verify.Sum, error)
	// Keep holds what Hash needs once Place keeps the file for later ones;
	// Release lets go of it again (Close calls it). Either may be nil.
	Keep, Release func()

	sum    verify.Sum
	hashed bool
}

// Confirm proves that t, a file DEST held before the run, still holds sum:
// as the real run does, it finds t as the cache recorded it (StillPlaced),
// not the duplicate's own destination, and reads it again. It returns t's
// metadata as found (FoundMeta) and true, or false when t is not to be
// shared.
type Confirm func(t *Target, sum verify.Sum) (Meta, bool)

// Place answers how the real run would place f, on a destination that can
// do what dest says: Copied when it would write f (f is then kept, for later
// files to share, until Close), or Cloned or Linked when it would share the
// data of a file written before it or held by DEST (proved by confirm).
// hashed says f's Hash was called and succeeded; when it fails, f is
// written and not kept, as the real run copies a file it cannot hash.
func (fc *Forecast) Place(f *Planned, dest Dest, confirm Confirm) (way Way, hashed bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.bySize == nil {
		fc.bySize = map[int64][]*Planned{}
	}
	if !fc.loaded {
		fc.loaded = true
		fc.loadDest()
	}
	list := fc.bySize[f.Size]
	if len(list) > 0 || len(fc.dest[f.Size]) > 0 {
		sum, err := f.Hash(false)
		if err != nil {
			return Copied, false // the real run copies it and reports what it finds
		}
		f.sum, f.hashed = sum, true
		if w := fc.shareRun(list, f, dest); w != Copied {
			return w, true
		}
		for _, t := range fc.dest[f.Size] {
			if t.Sum != f.sum {
				continue
			}
			if m, ok := confirm(t, f.sum); ok {
				if w := dest.Way(m == f.Meta); w != Copied {
					return w, true
				}
			}
		}
	}
	if f.Keep != nil {
		f.Keep()
	}
	fc.bySize[f.Size] = append(list, f)
	return Copied, f.hashed
}

// shareRun is how f would share the data of one of the files of its size
// the dry run would write before it (list), hashing those not hashed yet.
func (fc *Forecast) shareRun(list []*Planned, f *Planned, dest Dest) Way {
	for _, t := range list {
		if !t.hashed {
			s, err := t.Hash(true)
			if err != nil {
				continue
			}
			t.sum, t.hashed = s, true
		}
		if t.sum != f.sum {
			continue
		}
		if w := dest.Way(t.Meta == f.Meta); w != Copied {
			return w
		}
	}
	return Copied
}

// loadDest takes the files DEST holds already, by size.
func (fc *Forecast) loadDest() {
	if fc.Load == nil {
		return
	}
	fc.dest = map[int64][]*Target{}
	fc.Load(func(t *Target) {
		fc.dest[t.Size] = append(fc.dest[t.Size], t)
	})
}

// Close releases every file kept (Planned.Release) and forgets them.
func (fc *Forecast) Close() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for _, list := range fc.bySize {
		for _, t := range list {
			if t.Release != nil {
				t.Release()
			}
		}
	}
	fc.bySize = nil
}
