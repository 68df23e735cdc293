package copyengine

import (
	"errors"

	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/records"
	"github.com/fastcopy/fastcopy/verify"
)

// needSum says whether every copied file's source digest must be computed:
// for the read-back, or for a manifest or an ASC MHL generation.
func (o *Options) needSum() bool {
	return o.Verify != VerifyOff || o.listsSums()
}

// listsSums says whether the run lists the digest of every file it puts or
// finds in place: for a manifest (--manifest), an ASC MHL generation
// (--mhl) or a bag (--bag). Such a run decides as --checksum where the
// cache cannot vouch for a file found unchanged, so that it knows each
// digest.
func (o *Options) listsSums() bool { return o.Manifest != "" || o.MHL || o.Bag }

// skipUnchanged reports an entry found unchanged by its stat (and the
// cache) as skipped, or fixed when its metadata was brought up to date,
// and returns the digest the records list it with. A regular file is
// listed, when the run writes records, with its source's digest: the
// decision that it is unchanged took it from the cache (both sides'
// valid entries equal), and an empty file needs none. Any other case
// read the file (checkEntry) and never comes here while records are
// written; should it, the file fails by name. Without records, or for
// what is not a regular file, the digest is zero.
func (dc *decider) skipUnchanged(rel string, en *entry) verify.Sum {
	e := dc.e
	o := skipOutcome(rel, en.st.Size, en.fixed, unchangedSum(en))
	missing := false
	if en.st.IsRegular() && e.opt.listsSums() && !e.skipWrite() { // the run writes a list of digests
		switch {
		case en.st.Size == 0:
			en.extra = e.records.hashes.Empty()
			o.Listed, o.Sum = true, verify.Bytes(nil)
		case en.cache != nil && en.cache.SrcOK && en.cache.DstOK:
			o.Listed, o.Sum = true, en.cache.Src // lookupCache took en.extra from the source's entry
		default:
			missing = true
		}
		o.Extra = en.extra
	}
	e.report(o)
	if missing {
		e.fail(rel, errors.New("no digest of the source for the manifest or the ASC MHL history"))
	}
	if !o.Listed {
		return verify.Sum{}
	}
	return o.Sum
}

// skipOutcome is the outcome of an unchanged entry: skipped, or fixed
// when its metadata was brought up to date; sum is its digest, when known
// (zero otherwise).
func skipOutcome(rel string, size int64, fixed bool, sum verify.Sum) *outcome.Outcome {
	o := &outcome.Outcome{Kind: outcome.Skipped, Action: ActSkip, Path: rel, Size: size, Sum: sum}
	if fixed {
		o.Kind, o.Action = outcome.Fixed, ActMeta
	}
	return o
}

// writeManifest writes the manifest (records.Manifest) once the run's
// files are in place. Every line's digest is a source's: read this run,
// or from its valid cache entry.
func (rk *recordKeeper) writeManifest() error {
	o := &rk.e.opt
	if o.Manifest == "" || rk.e.skipWrite() {
		return nil
	}
	m := records.Manifest{Path: o.Manifest, Format: o.manifestFormat(), NoSync: o.NoSync, TempSuffix: tempSuffix}
	failed, err := m.Write(&rk.set)
	rk.failAll(failed)
	return err
}

// checkManifestPath refuses a manifest whose directory is DEST or lies
// inside it: there it is either a file the source does not have (a tree
// comparison counts it) or the name of a copy (the manifest replaces it).
// Strings cannot decide this: case folding, a symlink, a bind mount of
// DEST or of a directory in it, or a --names mapping reach one file by
// several spellings. So the manifest's nearest existing directory is
// compared with DEST by identity (checkOutside). It writes nothing, and a
// dry run refuses what the real run would.
func (o *Options) checkManifestPath(p *plan) error {
	if o.Manifest == "" {

		return nil
	}
	inside := func() error {
		return refuse(o.Manifest, "is inside the destination "+quote(p.dstRoot)+": the copy would count it as a file the source does not have, or it would replace a copy", "write the manifest outside the destination")
	}
	return checkOutside(o.Manifest, p.dstRoot, inside)
}

// checkOutside returns refusal() when the path lies in the directory
// dstRoot or is it, by identity (overlapInside: through symlinks, ".."
// as the kernel resolves it, bind mounts and second mounts), else nil.
// A path that goes up from a directory not made yet is refused as such.
func checkOutside(path, dstRoot string, refusal func() error) error {
	if _, err := argPath(path); err != nil {
		return err
	}
	if in, err := overlapInside(path, dstRoot); err == nil && in {
		return refusal()
	}
	return nil
}
