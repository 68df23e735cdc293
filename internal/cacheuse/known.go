package cacheuse

import (
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Known answers digests from the hash cache for files below roots, as
// treeverify.TreeOptions.Known: where an entry is valid for the file as it is
// now (by the policy of the root's filesystem) and was recorded on the
// volume the root is on now. A file on another filesystem than its root's
// (a mount point below it), or below a root whose volume has no identity, is
// read. Nil without a cache: everything is read.
func Known(hc *hashcache.Cache, roots ...string) func(string, *fileio.Stat) (verify.Sum, bool) {
	if hc == nil {
		return nil
	}
	// The same rules as a run's lookups (Lookup): the key is the
	// path below the root's real path, the policy the root filesystem's.
	type root struct {
		side   hashcache.Side
		prefix string
		vol    hashcache.VolumeInfo
	}
	var rs []root
	for _, r := range roots {
		side := hashcache.SideOf(r)
		vol, _ := hashcache.Identify(side.Abs)
		rs = append(rs, root{side: side, prefix: side.Abs + string(filepath.Separator), vol: vol})
	}
	return func(path string, st *fileio.Stat) (verify.Sum, bool) {
		for _, r := range rs {
			if !strings.HasPrefix(path, r.prefix) {
				continue
			}
			if r.vol.Volume == 0 || st.Dev != r.vol.Dev {
				return verify.Sum{}, false
			}
			e, ok := hc.Get(path)
			if ok && e.Valid(hashcache.StateOf(st, r.vol.Volume), r.side.Policy) {
				return e.Sum, true
			}
			return verify.Sum{}, false
		}
		return verify.Sum{}, false
	}
}
