package transfer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/meta"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/verify"
)

// ErrChanged is the failure of a transfer whose source changed while it
// was read (the caller tries once more, then fails the file).
var ErrChanged = errors.New("source changed while it was read")

// Config is the run's whole input to its transfers.
type Config struct {
	Ctx context.Context // the run: a cancel stops a transfer mid-way

	NoReflink   bool               // --reflink=never: never clone
	ReflinkOnly bool               // --reflink=always: clone or fail the file
	Verify      outcome.VerifyMode // how the copy is read back (streamCheck, checkCached)
	NeedSum     bool               // every source's digest is needed (a clone reads it; no copy_file_range)
	Shared      bool               // sources are read through a share with other runs (no copy_file_range)
	Deref       bool               // symlinks among the sources are followed (their xattrs are the target's)
	DstDev      uint64             // the destination root's device
	Clones      *Clones            // what is known of cloning per device
	Resume      Resume             // which temporaries are kept and taken up
	Euid        int                // the process's effective uid (a temporary taken up is its own)
	// InodesLast is hashcache.Policy's CheckInode of the destination: its
	// filesystem keeps an inode's number while it is closed (holdWritten).
	InodesLast bool

	Meter *throttle.Meter // --bwlimit; nil without a limit
	Stats *outcome.Stats  // the run's byte counters
	Meta  meta.Config     // the metadata of a copy
	Made  *made.Record    // what runs made in the destination root: which taken names are leftovers (Leftover, Clear)

	// Source is what a source file is read through (source.Share).
	Source func(f *fileio.File, st *fileio.Stat) verify.Source
	// Hash streams a source for its digest (and the extra formats the
	// run's records need), handing each piece to sink.
	Hash func(f verify.Source, size int64, buf []byte, sink verify.Sink) (verify.Sum, int64, map[string]string, error)
	// KeepBtime gives tmp in dd the creation time of st, where kept.
	KeepBtime func(dd *fileio.Dir, tmp string, st *fileio.Stat)
	// TakeHeld takes a descriptor of the budget of those held open ahead
	// of their use; false when none is to spare.
	TakeHeld func() bool
}

// MayClone reports whether the data path would try a clone for st.
func (c *Config) MayClone(st *fileio.Stat) bool {
	if st.Size == 0 || c.NoReflink || st.Dev != c.DstDev {
		return false
	}
	return !c.Clones.Broken(st.Dev)
}

// ReadsNothing reports whether the transfer of st is expected to read none
// of its data: a clone, where cloning has worked, that needs no digest.
func (c *Config) ReadsNothing(st *fileio.Stat) bool {
	return c.Clones.Works(st.Dev) && !c.NeedSum && c.MayClone(st)
}

// KeepsTemp reports whether a temporary of a file like st that did not
// finish is kept for the next run rather than removed: the run is
// stopping, and the file is resumable and written under a temporary name
// (not staged: in a staged directory, which the next run removes whole).
func (c *Config) KeepsTemp(st *fileio.Stat, staged bool) bool {
	return c.Ctx.Err() != nil && !staged && c.Resume.Resumable(st)
}

func (c *Config) charge(kind throttle.Kind, n int64) error { return c.Meter.Charge(c.Ctx, kind, n) }

func (c *Config) cannotKeep(kind meta.Kind, err error) bool {
	return c.Meta.CannotKeep != nil && c.Meta.CannotKeep(kind, err)
}

// Clones is the memory of where cloning works: per device, whether a
// FICLONE failed there (then no file there is cloned again) or worked.
type Clones struct {
	broken sync.Map // dev -> true once FICLONE failed there
	works  sync.Map // dev -> true once FICLONE worked there
}

// Broken reports whether a clone on dev failed for the filesystem.
func (c *Clones) Broken(dev uint64) bool {
	_, ok := c.broken.Load(dev)
	return ok
}

// Works reports whether a clone on dev has worked.
func (c *Clones) Works(dev uint64) bool {
	_, ok := c.works.Load(dev)
	return ok
}

// NoteBroken records that the filesystem of dev cannot clone.
func (c *Clones) NoteBroken(dev uint64) { c.broken.Store(dev, true) }

// NoteWorks records that a clone on dev worked.
func (c *Clones) NoteWorks(dev uint64) { c.works.Store(dev, true) }

// Preread is what was read of a source (Job.Src) for its digest before
// the decision to write it.
type Preread struct {
	Sum     verify.Sum
	N       int64
	Whole   bool // all N bytes are still in the buffer it was read with
	Started time.Time
}
