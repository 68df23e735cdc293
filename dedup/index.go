package dedup

import (
	"sync"

	"github.com/fastcopy/fastcopy/verify"
)

// Meta is the metadata a copy keeps. Two files may share one inode only when
// it is identical, or one of them would lose its own.
type Meta struct {
	Mode       uint32
	Uid, Gid   uint32
	Mtime      int64
	XattrsHash uint64 // a digest of the names and values of the extended attributes
}

// Placed describes a target on disk once it is in place, to confirm later
// that it still holds the bytes it was verified with.
type Placed struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64
}

// Target is a file written by this run (or found in the destination) whose
// content later files can share.
type Target struct {
	Rel  string // path relative to the destination root
	Sum  verify.Sum
	Size int64
	Meta Meta
	// External marks a file the destination held before the run (known
	// from the hash cache): its Meta is not known, and the caller confirms
	// its metadata and content before sharing it.
	External bool

	mu     sync.Mutex
	done   bool
	ok     bool
	placed Placed
}

// Done records whether the target made it into place, and its stat then.
func (t *Target) Done(ok bool, p Placed) {
	t.mu.Lock()
	t.done, t.ok, t.placed = true, ok, p
	t.mu.Unlock()
}

// InPlace reports whether the target is in place, and its stat when it was
// verified.
func (t *Target) InPlace() (Placed, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.placed, t.done && t.ok
}

type group struct {
	writing  int // files of this size being written whose digest is not known yet
	bySum    map[verify.Sum][]*Target
	unlooked []*Target // External targets Begin has not passed to gone yet
}

// Index maps size and digest to targets. It is safe for concurrent use.
type Index struct {
	mu     sync.Mutex
	cond   *sync.Cond
	closed bool
	sizes  map[int64]*group
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	ix := &Index{sizes: map[int64]*group{}}
	ix.cond = sync.NewCond(&ix.mu)
	return ix
}

// Begin announces a file of the given size. Without a collision (no other
// file of that size known) the file is counted as being written and the
// caller must end with Register or Abandon. With one, the caller hashes the
// file first and calls Find.
//
// Targets the destination held before the run (External, known from the
// hash cache) that nothing has looked at yet are first passed to gone, once
// each, and forgotten when it reports them missing or changed: hashing a
// file only to find that its one match was deleted since the cache saw it
// would be wasted reading. gone may be nil.
func (ix *Index) Begin(size int64, gone func(*Target) bool) (collides bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	g := ix.sizes[size]
	if g == nil {
		g = &group{bySum: map[verify.Sum][]*Target{}}
		ix.sizes[size] = g
	} else if g.writing > 0 {
		return true
	}
	if gone != nil {
		g.prune(gone)
	}
	if len(g.bySum) > 0 {
		return true
	}
	g.writing = 1
	return false
}

// prune drops the External targets that gone reports missing.
func (g *group) prune(gone func(*Target) bool) {
	for _, t := range g.unlooked {
		if !gone(t) {
			continue
		}
		g.remove(t)
	}
	g.unlooked = nil
}

// remove takes t out of the group's targets.
func (g *group) remove(t *Target) {
	ts := g.bySum[t.Sum]
	for i, x := range ts {
		if x == t {
			ts = append(ts[:i], ts[i+1:]...)
			break
		}
	}
	if len(ts) == 0 {
		delete(g.bySum, t.Sum)
	} else {
		g.bySum[t.Sum] = ts
	}
}

// Find waits until every file of this size being written without a known
// digest (after Begin) has registered it, then returns a target with the
// same digest (and, when sameMeta, the same Meta), with mine false. With
// none, the caller's file becomes a target under rel at once, returned with
// mine true: the caller writes it and ends with Done on it, or Drop when it
// wrote something else or nothing. Its digest is known, so files of its
// size hashed later need not wait for its write: one with the same digest
// finds it (and shares its data once it is in place), others go on.
//
// sameMeta is asked once the wait is over, since what the writers of this
// size found out (that the destination cannot clone, say) may decide it.
func (ix *Index) Find(rel string, size int64, sum verify.Sum, meta Meta, sameMeta func() bool) (t *Target, mine bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	g := ix.sizes[size]
	if g == nil {
		g = &group{bySum: map[verify.Sum][]*Target{}}
		ix.sizes[size] = g
	}
	for g.writing > 0 && !ix.closed {
		ix.cond.Wait()
	}
	linkOnly := sameMeta()
	for _, t := range g.bySum[sum] {
		if !linkOnly || t.External || t.Meta == meta {
			return t, false
		}
	}
	t = &Target{Rel: rel, Sum: sum, Size: size, Meta: meta}
	g.bySum[sum] = append(g.bySum[sum], t)
	return t, true
}

// Drop forgets a target that Find made for a file its caller did not write
// as announced. Files that found it meanwhile see it never placed.
func (ix *Index) Drop(t *Target) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if g := ix.sizes[t.Size]; g != nil {
		g.remove(t)
	}
}

// Others returns the targets with t's size and digest, other than t, whose
// Meta is meta, newest first. A file that cannot be hard-linked to t (other
// metadata, or t is out of links) may be linked to one of them. External
// targets are left out: their metadata is not known. It does not wait.
func (ix *Index) Others(t *Target, meta Meta) []*Target {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	g := ix.sizes[t.Size]
	if g == nil {
		return nil
	}
	var out []*Target
	list := g.bySum[t.Sum]
	for i := len(list) - 1; i >= 0; i-- {
		if c := list[i]; c != t && !c.External && c.Meta == meta {
			out = append(out, c)
		}
	}
	return out
}

// Register records the digest of a file written after Begin and returns it
// as a target for later files.
func (ix *Index) Register(rel string, size int64, sum verify.Sum, meta Meta) *Target {
	t := &Target{Rel: rel, Sum: sum, Size: size, Meta: meta}
	ix.mu.Lock()
	g := ix.sizes[size]
	g.bySum[sum] = append(g.bySum[sum], t)
	g.writing--
	ix.mu.Unlock()
	ix.cond.Broadcast()
	return t
}

// Abandon ends a Begin whose file was not written.
func (ix *Index) Abandon(size int64) {
	ix.mu.Lock()
	ix.sizes[size].writing--
	ix.mu.Unlock()
	ix.cond.Broadcast()
}

// Add records a target that exists already (a verified destination file
// from the hash cache) without counting it as being written.
func (ix *Index) Add(t *Target) {
	ix.mu.Lock()
	g := ix.sizes[t.Size]
	if g == nil {
		g = &group{bySum: map[verify.Sum][]*Target{}}
		ix.sizes[t.Size] = g
	}
	g.bySum[t.Sum] = append(g.bySum[t.Sum], t)
	if t.External {
		g.unlooked = append(g.unlooked, t)
	}
	ix.mu.Unlock()
}

// Close wakes every waiter (a run that is stopping); Find then returns what
// it has.
func (ix *Index) Close() {
	ix.mu.Lock()
	ix.closed = true
	ix.mu.Unlock()
	ix.cond.Broadcast()
}

// Candidates is the order in which a duplicate matched to t tries the
// targets of its content: t first and then, but under --dedup=clone, the
// Others with its Meta, since one that could not take it as a hard link
// (other metadata, or out of links) leaves another copy of the content
// with this file's metadata that may.
func (ix *Index) Candidates(t *Target, meta Meta, mode Mode) []*Target {
	if mode == Clone {
		return []*Target{t}
	}
	return append([]*Target{t}, ix.Others(t, meta)...)
}
