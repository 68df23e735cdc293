// Package jobs chooses how many copy workers (--jobs) a run uses from the
// devices it reads and writes: Choose from the source's device (one
// stream for a disk that seeks or sits behind USB, eight or one per CPU
// for anything else) and For with the destination's filesystem too (at
// most FUSEMax writers to a FUSE destination). A number given explicitly
// is kept as it is. Each answer comes with why, for -v and --json. It
// asks fileio of the devices (fileio.DeviceOf, fileio.FSType) and
// nothing else.
package jobs
