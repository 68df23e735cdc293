package copyengine

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/verify"
)

// Digests in other formats than xxh128, for records.
//
// The copy's own checks (the read-back, dedup, the cache's decisions) are
// xxh128 and stay so. A record may need other formats: a manifest with
// ManifestHash sha256, an ASC MHL generation with MHLHashes xxh64,md5, a
// BagIt bag's sha256 manifest. Those are computed in the same pass over
// each source byte as its xxh128 (streamSource tees what is read into a
// digest.Set), never by reading a file again, and only when a record asks
// for them: a run without one hashes xxh128 alone, as before. They ride
// with the entry (entry.extra, linkGroup.extra) to the one report that
// lists the file (recordSum), and are remembered in the source's hash
// cache entry (hashcache.Entry.Digests), so that a rerun that finds the
// file unchanged lists them without reading it; an entry that lacks one
// does not vouch for the source, which is then read.

// xxh128 is the copy's own format, which verify.Sum holds.
const xxh128 = "xxh128"

// checkRecords parses the formats the records are asked for and refuses
// what they cannot hold.
func (o *Options) checkRecords() error {
	if o.ManifestHash != "" {
		const use = "use sha256, sha512, blake3, md5, sha1, xxh64, xxh3 or xxh128"
		f, ok := digest.Lookup(o.ManifestHash)
		if !ok {
			return refuse(o.ManifestHash, "is not a hash format fastcopy writes", use)
		}
		if f.Name == "c4" || f.Name == "xxh32" {
			return refuse(o.ManifestHash, "has no coreutils-style manifest", use)
		}
		if o.Manifest == "" && !o.Bag {
			return &RefusalError{Msg: "--manifest-hash sets the format of --manifest (or of --bag's manifest), and neither was given", Hint: "add --manifest FILE, or leave --manifest-hash out"}
		}
	}
	if len(o.MHLHashes) > 0 {
		if !o.MHL {
			return &RefusalError{Msg: "--mhl-hash sets the formats of --mhl's generation, and --mhl was not given", Hint: "add --mhl, or leave --mhl-hash out"}
		}
		if _, err := digest.Parse(strings.Join(o.MHLHashes, ",")); err != nil {
			return &RefusalError{Msg: "--mhl-hash: " + err.Error(), Hint: "name formats of the ASC MHL specification: " + strings.Join(mhlFormats, ", ")}
		}
		for _, n := range o.MHLHashes {
			if !isMHLFormat(n) {
				return refuse(n, "is not a hash format of the ASC MHL specification", "use "+strings.Join(mhlFormats, ", "))
			}
		}
	}
	return o.checkBag()
}

// mhlFormats are the formats an ASC MHL generation may record (the
// specification's, less none).
var mhlFormats = []string{"xxh128", "xxh64", "xxh3", "md5", "sha1", "c4"}

func isMHLFormat(name string) bool {
	for _, f := range mhlFormats {
		if strings.EqualFold(f, strings.TrimSpace(name)) {
			return true
		}
	}
	return false
}

// manifestFormat is the format of the manifest's digests.
func (o *Options) manifestFormat() string {
	if o.ManifestHash == "" {
		return xxh128
	}
	f, _ := digest.Lookup(o.ManifestHash)
	return f.Name
}

// mhlFormatNames are the formats of a new ASC MHL generation, in the order
// given (xxh128 when none is).
func (o *Options) mhlFormatNames() []string {
	if len(o.MHLHashes) == 0 {
		return []string{xxh128}
	}
	out := make([]string, 0, len(o.MHLHashes))
	for _, n := range o.MHLHashes {
		if f, ok := digest.Lookup(n); ok {
			out = append(out, f.Name)
		}
	}
	return out
}

// extraFormats are the formats other than xxh128 the run's records need,
// computed as each source is read; nil when none is.
func (o *Options) extraFormats() []*digest.Format {
	var names []string
	if o.Manifest != "" || o.Bag {
		names = append(names, o.manifestFormat())
	}
	if o.Bag {
		names = append(names, o.bagFormat())
	}
	if o.MHL {
		names = append(names, o.mhlFormatNames()...)
	}
	seen := map[string]bool{xxh128: true}
	var out []*digest.Format
	for _, n := range names {
		if f, ok := digest.Lookup(n); ok && !seen[f.Name] {
			seen[f.Name] = true
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// streamSource is verify.Stream over a source file (en's): with the run's
// extra formats, each byte read is also fed to them, and their digests are
// kept in en.extra once the whole file was read. Without any, it is
// verify.Stream.
//
// A file read in one piece is hashed in the worker, which the other
// workers' files keep the other cores busy beside. A larger one is hashed
// by a teeHasher: one goroutine per extra format, each over a copy of
// every piece, beside the worker's read, xxh128 and write of the next
// pieces, so that a slow format (sha512, md5: a few hundred MB/s a core)
// takes cores of its own instead of holding up the copy of a large file.
func (e *engine) streamSource(en *entry, f verify.Source, size int64, buf []byte, sink verify.Sink) (verify.Sum, int64, error) {
	if len(e.extra) == 0 {
		return verify.Stream(f, size, false, buf, sink)
	}
	var tee interface {
		Write(p []byte) (int, error)
	}
	var sums func() map[string]string
	if size > 0 && size <= int64(len(buf)) {
		set := digest.NewSet(e.extra)
		tee, sums = set, set.Sums
	} else {
		th := e.newTeeHasher()
		defer th.close()
		tee, sums = th, th.sums
	}
	sum, n, err := verify.Stream(f, size, false, buf, func(p []byte, off int64) error {
		_, _ = tee.Write(p)
		return sink(p, off)
	})
	if err == nil {
		en.extra = sums()
	}
	return sum, n, err
}

// teeHashDepth is how many pieces a teeHasher holds copies of: the
// worker runs that far ahead of its slowest format before it waits.
const teeHashDepth = 4

// teeHasher hashes what it is given in the extra formats, each in a
// goroutine of its own, over copies of the pieces (the caller's buffer is
// reused by the next read as soon as Write returns).
type teeHasher struct {
	e     *engine
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

func (e *engine) newTeeHasher() *teeHasher {
	th := &teeHasher{e: e, free: make(chan *teePiece, teeHashDepth)}
	for _, f := range e.extra {
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
		pc = &teePiece{buf: th.e.buf()}
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
			th.e.putBuf(b)
		}
	}
}

// sums returns the digests of everything written.
func (th *teeHasher) sums() map[string]string {
	th.close()
	return th.final
}

// cachedExtras says whether a source's valid cache entry ent holds every
// extra digest the run needs, and if so gives them to en. Without extra
// formats it is always true.
func (e *engine) cachedExtras(en *entry, ent hashcache.Entry) bool {
	if len(e.extra) == 0 {
		return true
	}
	ds := ent.DigestMap()
	for _, f := range e.extra {
		if ds[f.Name] == "" {
			return false
		}
	}
	en.extra = ds
	return true
}

// withDigests is ent with the extra digests extra, for the cache.
func withDigests(ent hashcache.Entry, extra map[string]string) hashcache.Entry {
	if len(extra) > 0 {
		ent.Digests = hashcache.JoinDigests(extra)
	}
	return ent
}

// listed is one file the run lists in its records: its path below DEST,
// its xxh128 and the digests of the other formats asked for.
type listed struct {
	path  string
	sum   verify.Sum
	extra map[string]string
}

// digestOf returns l's digest in the format named, as records write it.
func (l *listed) digestOf(format string) (string, bool) {
	if format == xxh128 {
		return verify.Hex(l.sum), true
	}
	v, ok := l.extra[format]
	return v, ok
}

// emptyExtras are the extra digests of no bytes.
func (e *engine) emptyExtras() map[string]string {
	if len(e.extra) == 0 {
		return nil
	}
	return digest.NewSet(e.extra).Sums()
}

// errNoDigest is the failure of a file whose digest in a format a record
// needs the run does not have (it was neither read nor vouched for with
// it): the record is written without it, and a rerun reads it.
func errNoDigest(format string) error {
	return fmt.Errorf("no %s digest of the source for the record: rerun to read it", format)
}
