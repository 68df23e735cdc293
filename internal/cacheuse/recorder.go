package cacheuse

import (
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Recorder writes to the hash cache what the run learned: digests of
// sources as they are read, and of destination files once verified. A
// source's entry waits for its filesystem's flush (held), a destination's
// for the run's final flush (later) unless the run flushed it itself. It
// is safe for concurrent use; its lock guards only its own lists.
type Recorder struct {
	cfg   Config
	mu    sync.Mutex
	later []laterEntry // destination entries stored after the final flush
	held  []heldEntry  // source entries waiting for their filesystem's flush
	dirs  map[uint64]*fileio.Dir
	own   []*fileio.Dir // the directories of dirs, opened here, closed by Close
}

// NewRecorder returns the recorder of a run with the input cfg.
func NewRecorder(cfg Config) *Recorder { return &Recorder{cfg: cfg} }

// NoteSource notes d, a directory on the source filesystem dev, as the
// one that filesystem is flushed through before the entries of its files
// are stored (see Source). The first directory noted on a filesystem is
// kept, opened again (the caller closes its own).
func (r *Recorder) NoteSource(dev uint64, d *fileio.Dir) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.dirs[dev]; ok {
		return
	}
	again, err := d.OpenSub(".")
	if err != nil {
		return // its entries are dropped
	}
	r.own = append(r.own, again)
	if r.dirs == nil {
		r.dirs = map[uint64]*fileio.Dir{}
	}
	r.dirs[dev] = again
}

// sourceDir returns the directory the source filesystem dev is flushed
// through.
func (r *Recorder) sourceDir(dev uint64) (*fileio.Dir, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.dirs[dev]
	return d, ok
}

// Close closes the directories NoteSource opened. It runs at the end of
// the run, after StoreHeld.
func (r *Recorder) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.own {
		d.Close()
	}
	r.own, r.dirs = nil, nil
}

// Source stores the digest of a source read from started on while its
// stat stayed st, with its digests in the records' other formats (extra).
// An entry is stored only where the file's volume has an identity: on
// another, it could never be trusted.
//
// And only once the data it describes is on the source's stable storage. A
// file rewritten in place shortly before the run has its new stat in the
// filesystem's journal within seconds, while its data may stay in memory
// for half a minute (ext4, xfs): a power cut of the source then brings back
// the old bytes under the new stat, which the entry would vouch for. So
// entries are held, and stored in batches after a syncfs of their
// filesystem (through a directory on it the walk noted: NoteSource),
// which costs nothing where nothing is dirty (a read-only or idle source).
// An entry whose filesystem could not be flushed is dropped.
func (r *Recorder) Source(key string, st *fileio.Stat, sum verify.Sum, extra map[string]string, started time.Time) {
	ent, ok := r.entryFor(key, st, sum, started)
	if !ok {
		return
	}
	if len(extra) > 0 {
		ent.Digests = hashcache.JoinDigests(extra)
	}
	r.mu.Lock()
	r.held = append(r.held, heldEntry{key, st.Dev, ent})
	var batch []heldEntry
	if len(r.held) >= heldBatch {
		batch, r.held = r.held, nil
	}
	r.mu.Unlock()
	r.storeHeld(batch)
}

// heldEntry is a source's cache entry waiting for its filesystem's flush.
type heldEntry struct {
	key string
	dev uint64
	en  hashcache.Entry
}

// heldBatch is how many source entries are held before a flush of their
// filesystems stores them.
const heldBatch = 1 << 16

// StoreHeld stores the source entries still held, at the end of the run.
func (r *Recorder) StoreHeld() {
	r.mu.Lock()
	batch := r.held
	r.held = nil
	r.mu.Unlock()
	r.storeHeld(batch)
}

// storeHeld flushes each source filesystem of batch once and stores the
// entries of those that were flushed.
//
// Where a filesystem cannot be flushed as a whole but each file can be
// (Windows without administrator rights: IsFallback), each entry's file is
// flushed by itself (fileio.FlushPath) and its entry stored if the file
// flushed is the one it describes.
func (r *Recorder) storeHeld(batch []heldEntry) {
	flushed := map[uint64]bool{}
	perFile := map[uint64]bool{}
	for _, h := range batch {
		ok, done := flushed[h.dev]
		if !done {
			d, known := r.sourceDir(h.dev)
			if known {
				err := fileio.Syncfs(d)
				ok = err == nil
				perFile[h.dev] = fileio.IsFallback(err)
			}
			flushed[h.dev] = ok
		}
		if ok || (perFile[h.dev] && flushedAlone(h)) {
			r.cfg.Cache.Put(h.key, h.en)
		}
	}
}

// flushedAlone flushes the file of h by its path and reports whether it is
// the file h describes, as it was when read.
func flushedAlone(h heldEntry) bool {
	st, err := fileio.FlushPath(h.key)
	return err == nil && st.Ino == h.en.Ino && st.Size == h.en.Size && st.Mtime == h.en.Mtime && st.Ctime == h.en.Ctime
}

// Dest stores the digest of a destination file that was verified and
// whose data is flushed: the cache never holds a destination entry whose
// data could still be lost to a power cut (the file would then come back
// empty or zero-filled, maybe with the stat the entry matches). readAt is
// when its bytes were last read from the device and found to hold sum
// (hashcache.Entry.ReadAt), zero when unknown.
func (r *Recorder) Dest(key string, st *fileio.Stat, sum verify.Sum, started time.Time, readAt int64) {
	if ent, ok := r.entryFor(key, st, sum, started); ok {
		ent.ReadAt = readAt
		r.cfg.Cache.Put(key, ent)
	}
}

// DeviceRead is the hashcache.Entry.ReadAt of a read that began at t
// from the device itself (zero t: none).
func DeviceRead(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// entryFor builds the cache entry of a file in the state st: none without
// a cache, for an empty file, in a dry run, or on a volume with no known
// identity.
func (r *Recorder) entryFor(key string, st *fileio.Stat, sum verify.Sum, started time.Time) (hashcache.Entry, bool) {
	cfg := &r.cfg
	if cfg.Cache == nil || key == "" || st.Size == 0 || cfg.skipWrite() {
		return hashcache.Entry{}, false // a dry run stores nothing
	}
	vol := cfg.Volume(st.Dev)
	if vol == 0 {
		return hashcache.Entry{}, false
	}
	return hashcache.Entry{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Sum: sum, HashedAt: started.UnixNano(), Volume: vol}, true
}

// laterEntry is a destination entry held back until the final flush.
type laterEntry struct {
	key string
	en  hashcache.Entry
}

// DestLater is Dest for a destination file whose data this run did not
// flush (one found in place and read): it is stored by StoreFlushed,
// after the run's final flush, and dropped with --no-sync.
func (r *Recorder) DestLater(key string, st *fileio.Stat, sum verify.Sum, started time.Time, readAt int64) {
	ent, ok := r.entryFor(key, st, sum, started)
	if !ok {
		return
	}
	ent.ReadAt = readAt
	r.mu.Lock()
	r.later = append(r.later, laterEntry{key, ent})
	r.mu.Unlock()
}

// StoreFlushed stores the entries held back by DestLater, once every
// filesystem written has been flushed.
func (r *Recorder) StoreFlushed() {
	r.mu.Lock()
	later := r.later
	r.later = nil
	r.mu.Unlock()
	for _, l := range later {
		r.cfg.Cache.Put(l.key, l.en)
	}
}
