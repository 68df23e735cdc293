package source

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// MaxRuns is the most runs one Share serves (a bit each).
const MaxRuns = 16

// Share lets the runs of a copy to several destinations (RunAll)
// read each source byte once. Every run walks the source and decides for
// its own destination; when one of them reads a file's next bytes (its
// frontier), it keeps a copy of them for the other runs that may still
// want that file, and those take the copy instead of reading the source
// again. Each run hashes what it is handed itself and checks the source
// held still with its own stat, exactly as when it reads alone: a file
// whose identity (device, inode, size, mtime, ctime) differs between two
// runs' stats is two files here, never shared.
//
// The bytes kept are bounded (budget). A run that would keep more waits for
// the others to take what they need, so the fastest destination stays
// within budget bytes of the slowest; when nobody has taken anything for
// stallAfter (a run busy flushing, or one that will never read what is
// kept), the oldest bytes are dropped instead and whoever wanted them reads
// them from the source (counted in dropped).
type Share struct {
	mu      sync.Mutex
	cond    *sync.Cond
	running uint64 // the runs not yet ended, a bit each
	files   map[shareKey]*sharedFile
	known   []*sharedFile // files in the order recorded, for forgetting the oldest (see maxKnown)
	queue   []*shareChunk // in the order kept, for dropping the oldest
	freed   int           // chunks in queue freed already
	held    int64         // bytes kept
	budget  int64
	takes   int64 // chunks taken so far: progress, for the stall check
	stalled bool  // nobody took anything for stall: drop, do not wait
	stall   time.Duration

	handed  [MaxRuns]atomic.Int64 // per run: bytes it took instead of reading them
	dropped atomic.Int64          // bytes dropped before every run that wanted them took them
}

// stallAfter is how long a run waits for the slower destinations to take
// some of what is kept for them before it drops the oldest instead.
const stallAfter = 3 * time.Second

// Budget is how many bytes of the source a multi-destination copy
// keeps for its slower destinations: an eighth of the machine's memory,
// between 256 MiB and 1 GiB. Two destinations of one speed drift apart by
// a flush batch or two (commitBatchBytes each: a run writes a batch into
// the page cache, then waits for its device), and what drifts apart beyond
// the budget is waited for: with 256 MiB, two 100 MB/s drives took 1.4x
// the time of one, with 1 GiB 1.06x (docs/benchmarks.md, Offload).
func Budget() int64 {
	return min(max(fileio.MemTotal()/8, 256<<20), 1<<30)
}

// maxKnown bounds the files the share records (a few megabytes of
// records). A run walks ahead of another through files it is done with
// (unchanged on its destination, say) without waiting for it; past this
// many the oldest records that hold no bytes and no read are forgotten.
// That costs no correctness: a run that meets a forgotten file later
// reads it alone, or keeps its bytes for a run done with it already,
// which the stall check drops.
const maxKnown = 1 << 16

func NewShare(runs int, budget int64) *Share {
	s := &Share{running: 1<<runs - 1, files: map[shareKey]*sharedFile{}, budget: budget, stall: stallAfter}
	s.cond = sync.NewCond(&s.mu)
	return s
}

type shareKey struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

func keyOf(st *fileio.Stat) shareKey {
	return shareKey{st.Dev, st.Ino, st.Size, st.Mtime, st.Ctime}
}

// sharedFile is what the share knows of one source file.
type sharedFile struct {
	key      shareKey
	passed   uint64 // runs done with it (read it, or will not)
	frontier int64  // read up to here, in order
	reading  bool   // a run is reading at the frontier
	chunks   map[int64]*shareChunk
}

// shareChunk is one read's bytes, kept for the runs in need.
type shareChunk struct {
	f     *sharedFile
	off   int64
	asked int // the length of the read that got it: a taker must ask the same
	data  []byte
	need  uint64 // runs that may still take it
}

// reader returns what run id reads st's file through: f itself, or a
// reader that shares its bytes with the other runs.
//
// st is the run's stat of the name (the walk's), taken before f was
// opened: the name may lead to another file by now (a symbolic link
// retargeted under -L, a file renamed over it where the replaced one's
// times do not move), and st would then name bytes read from f that are
// not st's file's. So f's own identity must be st's: a descriptor's inode
// never changes, and a change of the file in place moves the times every
// run holding it checks. A descriptor that is not st's file fails its
// run's check anyway; it reads alone.
func (s *Share) Reader(id uint64, f *fileio.File, st *fileio.Stat) verify.Source {
	if s == nil || st.Size <= 0 {
		return f
	}
	if cur, err := f.Stat(); err != nil || Changed(st, &cur) {
		return f
	}
	return &sharedRead{s: s, id: id, key: keyOf(st), f: f}
}

type sharedRead struct {
	s   *Share
	id  uint64
	key shareKey
	f   *fileio.File
}

func (r *sharedRead) AdviseSequential() { r.f.AdviseSequential() }

// ReadFull takes the bytes another run kept for it, or reads them and keeps
// them for the others, or (anything else: an offset behind the frontier
// whose bytes were dropped, a read of another length) reads them itself.
func (r *sharedRead) ReadFull(p []byte, off int64) (int, error) {
	s := r.s
	s.mu.Lock()
	sf := s.files[r.key]
	if sf == nil {
		if s.running&^r.id == 0 {
			s.mu.Unlock()
			return r.f.ReadFull(p, off)
		}
		sf = s.record(r.key)
	}
	for {
		if c := sf.chunks[off]; c != nil && c.need&r.id != 0 {
			if c.asked != len(p) {
				break
			}
			n := copy(p, c.data)
			s.take(c, r.id)
			s.mu.Unlock()
			s.handed[bits.TrailingZeros64(r.id)].Add(int64(n))
			return n, nil
		}
		if off != sf.frontier || s.files[r.key] != sf {
			break
		}
		if sf.reading {
			s.cond.Wait() // for the run reading these bytes: it keeps them
			continue
		}
		if s.running&^sf.passed&^r.id == 0 {
			break // nobody else wants them
		}
		if !s.room(int64(len(p))) {
			continue // waited: look again
		}
		sf.reading = true
		s.mu.Unlock()
		n, err := r.f.ReadFull(p, off)
		s.mu.Lock()
		sf.reading = false
		if err == nil && s.files[r.key] == sf {
			if need := s.running &^ sf.passed &^ r.id; need != 0 && n > 0 {
				c := &shareChunk{f: sf, off: off, asked: len(p), data: append([]byte(nil), p[:n]...), need: need}
				sf.chunks[off] = c
				s.queue = append(s.queue, c)
				s.held += int64(n)
			}
			sf.frontier = off + int64(n)
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		return n, err
	}
	s.mu.Unlock()
	return r.f.ReadFull(p, off)
}

// room reports whether n more bytes may be kept now. When they may not, it
// waits a while for the other runs to take some and returns false, and the
// caller looks again; once nobody has taken anything for stallAfter it
// drops the oldest kept bytes to make room instead.
func (s *Share) room(n int64) bool {
	if s.held+n <= s.budget || s.held == 0 {
		return true
	}
	if s.stalled {
		s.drop(n)
		return true
	}
	takes := s.takes
	since := time.Now()
	t := time.AfterFunc(s.stall, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	s.cond.Wait()
	t.Stop()
	if s.takes == takes && time.Since(since) >= s.stall {
		s.stalled = true
	}
	return false
}

// drop frees the oldest kept chunks until n more bytes fit.
func (s *Share) drop(n int64) {
	for len(s.queue) > 0 && s.held+n > s.budget {
		c := s.queue[0] // kept: free trims what is freed off the head
		s.dropped.Add(int64(len(c.data)))
		s.free(c)
	}
}

// take gives run id its copy of c.
func (s *Share) take(c *shareChunk, id uint64) {
	c.need &^= id
	if c.need == 0 {
		s.free(c)
	}
	s.takes++
	s.stalled = false
	s.cond.Broadcast()
}

func (s *Share) free(c *shareChunk) {
	s.held -= int64(len(c.data))
	c.data = nil
	delete(c.f.chunks, c.off)
	s.forget(c.f)
	s.freed++
	// Trim the queue's freed head, so that it does not grow with the
	// chunks taken in order; and once most of it is freed (taken behind a
	// head a slow run has not taken yet), keep only what is still kept.
	for len(s.queue) > 0 && s.queue[0].data == nil {
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.freed--
	}
	if s.freed > 1024 && s.freed > len(s.queue)/2 {
		q := make([]*shareChunk, 0, len(s.queue)-s.freed)
		for _, c := range s.queue {
			if c.data != nil {
				q = append(q, c)
			}
		}
		s.queue, s.freed = q, 0
	}
}

// record starts the share's record of a file, forgetting the oldest ones
// that hold nothing once there are more than maxKnown.
func (s *Share) record(k shareKey) *sharedFile {
	sf := &sharedFile{key: k, chunks: map[int64]*shareChunk{}}
	s.files[k] = sf
	s.known = append(s.known, sf)
	for over := len(s.known) - maxKnown; over > 0; over-- {
		old := s.known[0]
		s.known[0] = nil
		s.known = s.known[1:]
		switch {
		case s.files[old.key] != old:
			// Forgotten already.
		case len(old.chunks) > 0 || old.reading:
			s.known = append(s.known, old) // in use: later
		default:
			delete(s.files, old.key)
		}
	}
	for len(s.known) > 0 && s.files[s.known[0].key] != s.known[0] {
		s.known[0] = nil
		s.known = s.known[1:]
	}
	return sf
}

// forget drops what the share knows of a file no run still wants.
func (s *Share) forget(sf *sharedFile) {
	if len(sf.chunks) == 0 && !sf.reading && s.running&^sf.passed == 0 && s.files[sf.key] == sf {
		delete(s.files, sf.key)
	}
}

// pass tells the share that run id is done with st's file: it read it, or
// decided not to (unchanged on its destination, failed, left out), so that
// nothing is kept for it.
func (s *Share) Pass(id uint64, st *fileio.Stat) {
	if s == nil || st.Size <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := keyOf(st)
	sf := s.files[k]
	if sf == nil {
		if s.running&^id == 0 {
			return
		}
		sf = s.record(k)
	}
	sf.passed |= id
	for _, c := range sf.chunks {
		if c.need &^= id; c.need == 0 {
			s.free(c)
		}
	}
	s.forget(sf)
	s.cond.Broadcast()
}

// leave tells the share that run id has ended: nothing is kept for it
// any more.
func (s *Share) Leave(id uint64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running &^= id
	for _, sf := range s.files {
		for _, c := range sf.chunks {
			if c.need &^= id; c.need == 0 {
				s.free(c)
			}
		}
		s.forget(sf)
	}
	s.cond.Broadcast()
}

// HandedTo returns the bytes run id took from another run's read.
func (s *Share) HandedTo(id uint64) int64 {
	if s == nil {
		return 0
	}
	return s.handed[bits.TrailingZeros64(id)].Load()
}

// Dropped returns the bytes dropped before every run that wanted them took
// them (those runs read them from the source again).
func (s *Share) Dropped() int64 {
	if s == nil {
		return 0
	}
	return s.dropped.Load()
}

// Changed reports whether a file moved between two stats of it.
func Changed(before, after *fileio.Stat) bool {
	return before.Ino != after.Ino || before.Dev != after.Dev || before.Size != after.Size ||
		before.Mtime != after.Mtime || before.Ctime != after.Ctime
}
