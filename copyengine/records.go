package copyengine

import (
	"sort"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/records"
	"github.com/fastcopy/fastcopy/verify"
)

// xxh128 is the copy's own format, which verify.Sum holds.
const xxh128 = records.XXH128

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
			return &RefusalError{Msg: "--mhl-hash: " + err.Error(), Hint: "name formats of the ASC MHL specification: " + strings.Join(records.MHLFormats, ", ")}
		}
		for _, n := range o.MHLHashes {
			if !records.IsMHLFormat(n) {
				return refuse(n, "is not a hash format of the ASC MHL specification", "use "+strings.Join(records.MHLFormats, ", "))
			}
		}
	}
	return o.checkBag()
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

// recordKeeper is the engine's glue to the run's records
// (internal/records): it lists each outcome the records list (the
// manifest, the ASC MHL generation and the bag share one Set), hashes
// sources in the records' other formats as they are read, and has each
// record written at its moment of the run, failing by name the files a
// record could not list. It also tells the audit log (--log) when what
// was reported is durable (audit.go).
type recordKeeper struct {
	e       *engine
	set     records.Set
	hashes  records.Hashes // the formats besides xxh128 the records need (Options.extraFormats)
	flushes records.Flushes
	mhlErr  error // why the ASC MHL generation was not written (mhl.go)
	bagErr  error // why the bag's tag files were not written (bag.go)
}

func newRecordKeeper(e *engine) *recordKeeper {
	return &recordKeeper{
		e:       e,
		hashes:  records.Hashes{Formats: e.opt.extraFormats(), Get: e.buf, Put: e.putBuf},
		flushes: records.Flushes{OnFlush: e.opt.OnFlush, Off: e.opt.NoSync || e.skipWrite()},
	}
}

// listen is the records' listener: an outcome Listed is noted for them
// when the run lists digests.
func (rk *recordKeeper) listen(o *outcome.Outcome) {
	if o.Listed && rk.e.opt.listsSums() {
		rk.set.Add(records.Listed{Path: o.Path, Sum: o.Sum, Extra: o.Extra})
	}
}

// stream is verify.Stream over a source file (en's), which also computes
// its digests in the records' other formats (records.Hashes.Stream) and
// keeps them in en.extra once the whole file was read.
func (rk *recordKeeper) stream(en *entry, f verify.Source, size int64, buf []byte, sink verify.Sink) (verify.Sum, int64, error) {
	sum, n, extra, err := rk.hashes.Stream(f, size, buf, sink)
	if err == nil && extra != nil {
		en.extra = extra
	}
	return sum, n, err
}

// cachedExtras says whether a source's valid cache entry ent holds every
// extra digest the run needs, and if so gives them to en. Without extra
// formats it is always true.
func (rk *recordKeeper) cachedExtras(en *entry, ent hashcache.Entry) bool {
	if len(rk.hashes.Formats) == 0 {
		return true
	}
	ds, ok := rk.hashes.FromCache(ent.DigestMap())
	if ok {
		en.extra = ds
	}
	return ok
}

// failAll fails by name the files a record could not list.
func (rk *recordKeeper) failAll(failed []records.Failure) {
	for _, f := range failed {
		rk.e.fail(f.Path, f.Err)
	}
}

// flushed tells OnFlush that what was reported before at is durable.
func (rk *recordKeeper) flushed(at time.Time) { rk.flushes.Flushed(at) }
