package copyengine

import (
	"errors"

	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

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
			en.extra = e.records.Empty()
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

// skipOutcome is the outcome of an unchanged entry (outcome.Unchanged).
var skipOutcome = outcome.Unchanged

// unchangedSum is the digest of a regular file found unchanged without
// being read, where it is known: an empty file's, or the one the cache
// vouches for on both sides.
func unchangedSum(en *entry) verify.Sum {
	switch {
	case !en.st.IsRegular():
	case en.st.Size == 0:
		return verify.Bytes(nil)
	case en.cache != nil && en.cache.SrcOK && en.cache.DstOK && en.cache.Src == en.cache.Dst:
		return en.cache.Src
	}
	return verify.Sum{}
}
