package jobs

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Choose picks the number of copy workers from the source device: one
// stream for a disk that seeks or sits behind USB (parallel streams turn
// its sequential reads into seeks), eight for SSDs, virtual disks and
// filesystems with no block device. A paravirtual disk (virtio, xen) says it
// is rotational whatever backs it, so that flag is not trusted there.
func Choose(jobs int, src string) (int, string) {
	if jobs > 0 {
		return jobs, "set by --jobs"
	}
	dev := fileio.DeviceOf(src)
	switch {
	case dev.USB || (dev.Rotational && !dev.Virtual):
		return 1, "source on " + dev.String() + ": one stream avoids seeks"
	default:
		n := 8
		if runtime.NumCPU() > 8 {
			n = runtime.NumCPU()
		}
		return n, "source on " + dev.String() + ": parallel reads"
	}
}

// FUSEMax is the most copy workers a run uses, unless --jobs says
// otherwise, when its destination is a FUSE filesystem (exfat-fuse,
// ntfs-3g, fusefat: what a USB stick or card looks like to a kernel
// without the native driver). docs/benchmarks.md gives the measurements it is
// chosen from.
const FUSEMax = 4

// For is Choose with the destination taken into account: a FUSE
// destination gets at most FUSEMax workers, since its driver, one
// process, serves every write, and one driver (exfat-fuse) was seen to die
// under eight. An explicit jobs is kept as it is.
func For(jobs int, src, dst string) (int, string) {
	n, why := Choose(jobs, src)
	if jobs > 0 || n <= FUSEMax {
		return n, why
	}
	if t := destFSType(dst); strings.HasPrefix(t, "fuse") {
		return FUSEMax, fmt.Sprintf("%s, at most %d writers to a FUSE destination (%s)", why, FUSEMax, t)
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
