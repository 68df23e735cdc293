package drives

import (
	"fmt"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Ending is what a run had when a drive gone or a full destination
// stopped it: the counts its error reports, and how to make what is in
// place durable.
type Ending struct {
	Root   string // the destination, as given
	Kept   int64  // files in place, verified or unchanged
	Copied int64  // files copied
	Bytes  int64  // bytes copied
	Total  int64  // files found
	// Mismatch: some file read back different.
	Mismatch bool
	// Flush makes what is in place durable (the destination's
	// directories); nil where nothing is to be flushed (--no-sync, a dry
	// run, no destination opened).
	Flush func() error
}

// StopGone is the error that ends a run whose drive went away (g, from
// Gone or DestGone): what is in place is made durable where the
// destination still answers (the source went), and the error says how
// much that is.
func StopGone(g *DriveGoneError, end Ending) error {
	g.Kept = end.Kept
	if g.Side != "destination" && end.Flush != nil {
		if err := end.Flush(); err != nil {
			return fmt.Errorf("%w; and flushing %q to stable storage: %w", g, end.Root, err)
		}
	}
	return g
}

// StopFull is the error that ends a run halted by a full destination
// (nil if none was found): what is in place is made durable, and the
// error says how much that is and what is free.
func (w *Watch) StopFull(end Ending) error {
	f := w.FullErr()
	if f == nil {
		return nil
	}
	f.Root = end.Root
	f.Copied, f.Bytes, f.Mismatch, f.Total = end.Copied, end.Bytes, end.Mismatch, end.Total
	f.Free = -1
	if sp, err := fileio.SpaceOf(end.Root); err == nil && sp.Known() {
		f.Free = sp.Free
	}
	if end.Flush != nil {
		if err := end.Flush(); err != nil {
			return fmt.Errorf("%w; and flushing %q to stable storage: %w", f, end.Root, err)
		}
	}
	return f
}
