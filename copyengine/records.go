package copyengine

import (
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/records"
	"github.com/fastcopy/fastcopy/verify"
)

// ErrMHL is returned (wrapped, by an *MHLError) by Run when a run with
// Options.MHL put its files in place but could not write the ASC MHL
// generation: the copy stands, the history does not record it.
var ErrMHL = records.ErrMHL

// MHLError says why a run's ASC MHL generation was not written
// (records.MHLError).
type MHLError = records.MHLError

// ErrBag is returned (wrapped, by a *BagError) by Run when a run with
// Options.Bag put its files in place but could not write the bag's tag
// files: the copy stands, the bag does not describe it.
var ErrBag = records.ErrBag

// BagError says why a run's bag was not written (records.BagError).
type BagError = records.BagError

// recordOptions is what the run asks of its records (records.Options).
func (o *Options) recordOptions() records.Options {
	return records.Options{
		Manifest: o.Manifest, ManifestHash: o.ManifestHash,
		MHL: o.MHL, MHLHashes: o.MHLHashes, MHLToolVersion: o.MHLToolVersion,
		Bag: o.Bag, BagHash: o.BagHash, BagInfo: o.BagInfo,
		Dest: o.Dest, BagRoot: o.bagRoot,
		Update: o.Update, IgnoreExisting: o.IgnoreExisting,
		DryRun: o.DryRun, NoSync: o.NoSync, VerifyOff: o.Verify == VerifyOff,
	}
}

// checkRecords refuses what the records cannot hold
// (records.Options.Check) and, with --bag, makes Dest the bag's payload
// folder (once: Check runs again in Run).
func (o *Options) checkRecords() error {
	ro := o.recordOptions()
	err := ro.Check()
	o.Dest, o.bagRoot = ro.Dest, ro.BagRoot
	return err
}

// BagRoot is the bag a run with Bag makes (the Dest given), once Check
// made Dest its payload folder; "" otherwise.
func (o *Options) BagRoot() string { return o.bagRoot }

// needSum says whether every copied file's source digest must be computed:
// for the read-back, or for a manifest or an ASC MHL generation.
func (o *Options) needSum() bool {
	return o.Verify != VerifyOff || o.listsSums()
}

// listsSums says whether the run lists the digest of every file it puts or
// finds in place (records.Options.ListsSums): for a manifest (--manifest),
// an ASC MHL generation (--mhl) or a bag (--bag). Such a run decides as
// --checksum where the cache cannot vouch for a file found unchanged, so
// that it knows each digest.
func (o *Options) listsSums() bool {
	ro := o.recordOptions()
	return ro.ListsSums()
}

// recordKeeper is the run's records (records.Keeper: the manifest, the
// ASC MHL generation, the bag, the audit log's flushes), with what they
// take from an entry.
type recordKeeper struct{ *records.Keeper }

func newRecordKeeper(e *engine) *recordKeeper {
	return &recordKeeper{records.New(records.Config{
		Options:    e.opt.recordOptions(),
		Get:        e.buf,
		Put:        e.putBuf,
		OnFlush:    e.opt.OnFlush,
		SkipWrite:  e.skipWrite,
		TempSuffix: destfs.TempSuffix,
		Skip:       made.Name,
		Dest:       func() (string, *fileio.Dir) { return e.dstRootPath, e.dstRoot },
		Dirs: func() []string {
			var dirs []string
			for _, dm := range e.commit.walkedDirs() {
				dirs = append(dirs, dm.dstRel)
			}
			return dirs
		},
		Failed: e.fail,
		Count:  e.count,
	})}
}

// stream is verify.Stream over a source file (en's), which also computes
// its digests in the records' other formats (records.Hashes.Stream) and
// keeps them in en.extra once the whole file was read.
func (rk *recordKeeper) stream(en *entry, f verify.Source, size int64, buf []byte, sink verify.Sink) (verify.Sum, int64, error) {
	sum, n, extra, err := rk.Stream(f, size, buf, sink)
	if err == nil && extra != nil {
		en.extra = extra
	}
	return sum, n, err
}

// cachedExtras says whether a source's valid cache entry ent holds every
// extra digest the run needs, and if so gives them to en. Without extra
// formats it is always true.
func (rk *recordKeeper) cachedExtras(en *entry, ent hashcache.Entry) bool {
	if len(rk.Formats) == 0 {
		return true
	}
	ds, ok := rk.FromCache(ent.DigestMap())
	if ok {
		en.extra = ds
	}
	return ok
}
