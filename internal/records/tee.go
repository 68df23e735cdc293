package records

import (
	"sync"
	"sync/atomic"

	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/verify"
)

// Digests in other formats than xxh128, for records.
//
// The copy's own checks (the read-back, dedup, the cache's decisions) are
// xxh128 and stay so. A record may need other formats: a manifest with
// ManifestHash sha256, an ASC MHL generation with MHLHashes xxh64,md5, a
// BagIt bag's sha256 manifest. Those are computed in the same pass over
// each source byte as its xxh128 (Hashes.Stream tees what is read into a
// digest.Set), never by reading a file again, and only when a record asks
// for them: a run without one hashes xxh128 alone. They ride with the
// entry to the one outcome that lists the file, and are remembered in the
// source's hash cache entry (hashcache.Entry.Digests), so that a rerun
// that finds the file unchanged lists them without reading it
// (Hashes.FromCache); an entry that lacks one does not vouch for the
// source, which is then read.

// Hashes are the formats other than xxh128 a run's records need, and the
// buffers (of verify.BufSize) the hashing of large files borrows copies
// of pieces into.
type Hashes struct {
	Formats []*digest.Format
	Get     func() *[]byte
	Put     func(*[]byte)
}

// Stream is verify.Stream over a source file: with extra formats, each
// byte read is also fed to them, and their digests are returned once the
// whole file was read. Without any, it is verify.Stream.
//
// A file read in one piece is hashed in the caller, which the other
// workers' files keep the other cores busy beside. A larger one is hashed
// by a teeHasher: one goroutine per extra format, each over a copy of
// every piece, beside the caller's read, xxh128 and write of the next
// pieces, so that a slow format (sha512, md5: a few hundred MB/s a core)
// takes cores of its own instead of holding up the copy of a large file.
func (h *Hashes) Stream(f verify.Source, size int64, buf []byte, sink verify.Sink) (verify.Sum, int64, map[string]string, error) {
	if len(h.Formats) == 0 {
		sum, n, err := verify.Stream(f, size, false, buf, sink)
		return sum, n, nil, err
	}
	var tee interface {
		Write(p []byte) (int, error)
	}
	var sums func() map[string]string
	if size > 0 && size <= int64(len(buf)) {
		set := digest.NewSet(h.Formats)
		tee, sums = set, set.Sums
	} else {
		th := h.newTeeHasher()
		defer th.close()
		tee, sums = th, th.sums
	}
	sum, n, err := verify.Stream(f, size, false, buf, func(p []byte, off int64) error {
		_, _ = tee.Write(p)
		return sink(p, off)
	})
	if err != nil {
		return sum, n, nil, err
	}
	return sum, n, sums(), nil
}

// FromCache says whether the digests ds of a source's valid cache entry
// (hashcache.Entry.DigestMap) hold every extra format, and if so returns
// them. Without extra formats it is always true, with nil.
func (h *Hashes) FromCache(ds map[string]string) (map[string]string, bool) {
	if len(h.Formats) == 0 {
		return nil, true
	}
	for _, f := range h.Formats {
		if ds[f.Name] == "" {
			return nil, false
		}
	}
	return ds, true
}

// Empty are the extra digests of no bytes.
func (h *Hashes) Empty() map[string]string {
	if len(h.Formats) == 0 {
		return nil
	}
	return digest.NewSet(h.Formats).Sums()
}

// teeHashDepth is how many pieces a teeHasher holds copies of: the
// caller runs that far ahead of its slowest format before it waits.
const teeHashDepth = 4

// teeHasher hashes what it is given in the extra formats, each in a
// goroutine of its own, over copies of the pieces (the caller's buffer is
// reused by the next read as soon as Write returns).
type teeHasher struct {
	h     *Hashes
	sets  []*digest.Set // one format each
	ins   []chan *teePiece
	free  chan *teePiece
	made  int
	wg    sync.WaitGroup
	final map[string]string
}

// teePiece is one piece's copy, returned to free once every format has
// hashed it.
type teePiece struct {
	buf  *[]byte
	n    int
	left atomic.Int32
}

func (h *Hashes) newTeeHasher() *teeHasher {
	th := &teeHasher{h: h, free: make(chan *teePiece, teeHashDepth)}
	for _, f := range h.Formats {
		set := digest.NewSet([]*digest.Format{f})
		in := make(chan *teePiece, teeHashDepth)
		th.sets, th.ins = append(th.sets, set), append(th.ins, in)
		th.wg.Add(1)
		go func() {
			defer th.wg.Done()
			for p := range in {
				_, _ = set.Write((*p.buf)[:p.n])
				if p.left.Add(-1) == 0 {
					th.free <- p
				}
			}
		}()
	}
	return th
}

// Write hands a copy of p to every format's goroutine, waiting for a
// free piece when all are taken.
func (th *teeHasher) Write(p []byte) (int, error) {
	var pc *teePiece
	if th.made < teeHashDepth {
		th.made++
		pc = &teePiece{buf: th.h.Get()}
	} else {
		pc = <-th.free
	}
	if len(*pc.buf) < len(p) { // not the engine's reads (verify.BufSize)
		b := make([]byte, len(p))
		pc.buf = &b
	}
	pc.n = copy(*pc.buf, p)
	pc.left.Store(int32(len(th.ins)))
	for _, in := range th.ins {
		in <- pc
	}
	return len(p), nil
}

// close waits for the goroutines to hash what they were given and
// releases the buffers; the digests are then final. It may be called
// more than once.
func (th *teeHasher) close() {
	if th.final != nil {
		return
	}
	for _, in := range th.ins {
		close(in)
	}
	th.wg.Wait()
	th.final = map[string]string{}
	for _, s := range th.sets {
		for k, v := range s.Sums() {
			th.final[k] = v
		}
	}
	for ; th.made > 0; th.made-- {
		if b := (<-th.free).buf; len(*b) == verify.BufSize {
			th.h.Put(b)
		}
	}
}

// sums returns the digests of everything written.
func (th *teeHasher) sums() map[string]string {
	th.close()
	return th.final
}
