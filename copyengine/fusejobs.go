package copyengine

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// fuseMaxJobs is the most copy workers a run uses, unless --jobs says
// otherwise, when its destination is a FUSE filesystem (exfat-fuse,
// ntfs-3g, fusefat: what a USB stick or card looks like to a kernel
// without the native driver). docs/benchmarks.md gives the measurements it is
// chosen from.
const fuseMaxJobs = 4

// ChooseJobsFor is ChooseJobs with the destination taken into account: a
// FUSE destination gets at most fuseMaxJobs workers, since its driver, one
// process, serves every write, and one driver (exfat-fuse) was seen to die
// under eight. An explicit jobs is kept as it is.
func ChooseJobsFor(jobs int, src, dst string) (int, string) {
	n, why := ChooseJobs(jobs, src)
	if jobs > 0 || n <= fuseMaxJobs {
		return n, why
	}
	if t := destFSType(dst); strings.HasPrefix(t, "fuse") {
		return fuseMaxJobs, fmt.Sprintf("%s, at most %d writers to a FUSE destination (%s)", why, fuseMaxJobs, t)
	}
	return n, why
}

// destFSType is the filesystem type of dst, or of its nearest existing
// parent when it is not made yet.
func destFSType(dst string) string {
	p := dst
	for {
		if t, err := fileio.FSType(p); err == nil {
			return t
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
}
