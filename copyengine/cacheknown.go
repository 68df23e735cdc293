package copyengine

import (
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/cacheuse"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// CacheKnown answers digests from the hash cache for files below roots, as
// treeverify.TreeOptions.Known, by the rules of a run's lookups
// (cacheuse.Known). Nil without a cache: everything is read.
func CacheKnown(hc *hashcache.Cache, roots ...string) func(string, *fileio.Stat) (verify.Sum, bool) {
	return cacheuse.Known(hc, roots...)
}
