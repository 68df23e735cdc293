package copyengine

import "github.com/fastcopy/fastcopy/internal/jobs"

// ChooseJobs picks the number of copy workers from the source device
// (jobs.Choose): one stream for a disk that seeks or sits behind USB,
// parallel reads for anything else; an explicit jobs is kept.
func ChooseJobs(n int, src string) (int, string) { return jobs.Choose(n, src) }

// ChooseJobsFor is ChooseJobs with the destination taken into account
// (jobs.For): a FUSE destination gets at most jobs.FUSEMax workers, since
// its driver, one process, serves every write. An explicit n is kept as
// it is.
func ChooseJobsFor(n int, src, dst string) (int, string) { return jobs.For(n, src, dst) }
