package preflight

import (
	"runtime"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// ChooseJobs picks the number of copy workers from the source device: one
// stream for a disk that seeks or sits behind USB (parallel streams turn
// its sequential reads into seeks), eight for SSDs, virtual disks and
// filesystems with no block device. A paravirtual disk (virtio, xen) says it
// is rotational whatever backs it, so that flag is not trusted there.
// jobs above 0 is kept, as set by --jobs. It returns the number and why.
func ChooseJobs(jobs int, src string) (int, string) {
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
