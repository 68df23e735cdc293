package copyengine

import (
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// CacheKnown answers digests from the hash cache for files below roots, as
// verify.TreeOptions.Known: where an entry is valid for the file as it is
// now (by the policy of the root's filesystem) and was recorded on the
// volume the root is on now. A file on another filesystem than its root's
// (a mount point below it), or below a root whose volume has no identity, is
// read. Nil without a cache: everything is read.
func CacheKnown(hc *hashcache.Cache, roots ...string) func(string, *fileio.Stat) (verify.Sum, bool) {
	if hc == nil {
		return nil
	}
	type root struct {
		prefix string
		policy hashcache.Policy
		vol    hashcache.VolumeInfo
	}
	var rs []root
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		fsType, _ := hashcache.FSType(abs)
		vol, _ := hashcache.Identify(abs)
		rs = append(rs, root{prefix: abs + string(filepath.Separator), policy: hashcache.PolicyFor(fsType), vol: vol})
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
			if ok && e.Valid(hashcache.FileState{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Volume: r.vol.Volume}, r.policy) {
				return e.Sum, true
			}
			return verify.Sum{}, false
		}
		return verify.Sum{}, false
	}
}
