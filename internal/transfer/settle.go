package transfer

import (
	"context"
	"fmt"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
	"github.com/fastcopy/fastcopy/internal/source"
)

// SettleWindow is how recently a source may have changed for its read to be
// trusted. A write moves mtime and ctime when it starts, not when its data is
// in place: a stat taken while a write is copying its data sees the final
// times already, and a read racing that write's data is torn although the
// stat after it matches. So a file whose ctime is within this window of the
// moment its read began is read again after the window.
//
// Where the ctime is coarse the window starts at the end of the ctime's
// tick, not at the ctime: a write in the tick the ctime names leaves it as
// it was, so a read begun in that tick could be torn by a write that no stat
// shows. A read is trusted only if it began at least SettleWindow after the
// tick ended; a source whose ctime is more recent is waited for before it is
// read (AwaitSettled), which costs only files changed within the last tick
// on a filesystem with coarse times (ext3, ext4 with 128-byte inodes: 1 s;
// FAT: 2 s).
const SettleWindow = 50 * time.Millisecond

// farCtime is how far in the future a ctime may be and still be waited for:
// one beyond (a skewed clock) cannot be judged by the window and is left to
// the before/after comparison.
const farCtime = 10 * time.Second

// settledAt is the wall-clock time (ns) from which a read of a source with
// stat st can be trusted, res the resolution of its filesystem's times: the
// end of the tick of its last change plus SettleWindow, the tick at least a
// second long for a time without nanoseconds (a filesystem that stores
// whole seconds, which the type's policy cannot tell from a finer one). The
// last change is the ctime, or the mtime where that is later (FAT and
// some FUSE drivers report a creation time as the ctime). 0 for a ctime
// that cannot be judged (see farCtime).
func settledAt(st *fileio.Stat, res int64, now int64) int64 {
	if st.Ctime >= now+int64(farCtime) {
		return 0
	}
	last := st.Ctime
	if st.Mtime > last && st.Mtime < now+int64(farCtime) {
		last = st.Mtime
	}
	r := max(res, 1)
	if last%int64(time.Second) == 0 {
		r = max(r, int64(time.Second))
	}
	return floorDiv(last, r)*r + r + int64(SettleWindow)
}

// floorDiv is a/b rounded toward minus infinity: a time before 1970 is
// negative.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Settling reports whether st changed too shortly before started for a
// read begun then to be trusted (see SettleWindow).
func Settling(st *fileio.Stat, started time.Time, res int64) bool {
	t := started.UnixNano()
	return t < settledAt(st, res, t)
}

// AwaitSettled waits, before a source with stat st is read, until a read
// begun then can be trusted (see SettleWindow). It returns ctx's error when
// the run is cancelled meanwhile.
func AwaitSettled(ctx context.Context, st *fileio.Stat, res int64) error {
	now := time.Now().UnixNano()
	wait := time.Duration(settledAt(st, res, now) - now)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ChangedSince reports whether a source changed between before, the walk's
// stat of it, and after, the stat of the descriptor opened later and read.
// It is source.Changed, but for the inode number where the source's
// filesystem keeps none that lasts (inoLoose: hashcache.Policy's
// CheckInode is false; exfat-fuse and fusefat number an inode afresh
// each time the kernel has forgotten it): the walk's lookup and the open
// are two lookups, and may see two numbers for one file. The size and
// times still tell a file rewritten or replaced meanwhile, and what was
// read is what its digest is of: a --move removes the source only if it
// reads back to that digest (internal/move: the removal rule).
func ChangedSince(before fileio.Stat, inoLoose bool, after *fileio.Stat) bool {
	if inoLoose {
		before.Ino = after.Ino
	}
	return source.Changed(&before, after)
}

// Again readies the second attempt at a source (name in sd) that changed
// while it was read: it lets a write that was in flight finish (see
// Settling) and stats the source afresh, following a symlink with deref.
// A source that is no longer of the type it was (was) fails with
// refusal.ErrSourceChanged: replaced by a FIFO or a device, say, copied
// as a regular file it would read as nothing, or never end.
func Again(ctx context.Context, sd *fileio.Dir, name string, deref bool, was *fileio.Stat) (fileio.Stat, error) {
	select {
	case <-time.After(SettleWindow):
	case <-ctx.Done():
		return fileio.Stat{}, ctx.Err()
	}
	st, err := restat(sd, name, deref)
	if err != nil {
		return st, err
	}
	if st.Type() != was.Type() {
		return st, fmt.Errorf("%w: it is now a %s", refusal.ErrSourceChanged, fileio.Describe(st.Mode))
	}
	return st, nil
}

// restat stats name in sd afresh, following a symlink with deref.
func restat(sd *fileio.Dir, name string, deref bool) (fileio.Stat, error) {
	if deref {
		return sd.StatFollow(name)
	}
	return sd.Lstat(name)
}
