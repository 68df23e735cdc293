package copyengine

import (
	"context"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/source"
	"github.com/fastcopy/fastcopy/verify"
)

// destination is one destination's run of RunAll. The local directory
// tree, which the engine's pipeline copies to (localDest), is one kind; a
// destination of another kind (a remote store) is a second implementation
// of the same two methods over the same source side (internal/source): it
// walks the sources with the run's filters, reads each file through the
// share, hashes what it reads and asks the hash cache's source half, and
// nothing of the local pipeline (staging, flushes, the lock, the
// read-back) stands in its way or needs to know it exists.
type destination interface {
	// where is the destination as given, for messages.
	where() string
	// run copies the sources to the destination and sums up what it did,
	// reading every source byte through src.
	run(ctx context.Context, src *source.Side) (Summary, error)
}

// localDest is a destination directory on a filesystem of this machine:
// the engine's pipeline, with everything Run gives a destination alone.
type localDest struct {
	opt  Options
	plan *plan
}

func (d *localDest) where() string { return d.plan.dstRoot }

func (d *localDest) run(ctx context.Context, src *source.Side) (Summary, error) {
	o := d.opt
	o.share, o.shareID = src.Share, src.ID
	return newEngine(o).runPlan(ctx, d.plan, src.Start)
}

// runDestinations runs every destination at once over one source side,
// each reading through share (nil for one destination: it reads alone,
// copy_file_range too). A destination that fails does not stop the others.
func runDestinations(ctx context.Context, dests []destination, src source.Side, share *source.Share) []Result {
	res := make([]Result, len(dests))
	if len(dests) == 1 && share == nil {
		sum, err := dests[0].run(ctx, src.For(nil, 0))
		res[0] = Result{sum, err}
		return res
	}
	var wg sync.WaitGroup
	for i, d := range dests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := uint64(1) << i
			defer share.Leave(id)
			sum, err := d.run(ctx, src.For(share, id))
			sum.BytesShared = share.HandedTo(id)
			sum.BytesRead -= sum.BytesShared
			res[i] = Result{sum, err}
		}()
	}
	wg.Wait()
	return res
}

// newSourceSide is the source side of the destinations opt and p describe
// (the first destination's: RunAll refuses destinations that disagree on
// the sources).
func newSourceSide(opt *Options, p *plan, start time.Time) source.Side {
	roots := make([]source.Root, len(p.roots))
	for i, r := range p.roots {
		roots[i] = source.Root{Dir: r.srcDir, IsDir: r.isDir, Name: r.name, DstRel: r.dstRel, Side: r.side}
	}
	return source.NewSide(roots, opt.rules, opt.Dereference, opt.Cache, start)
}

// source returns what the run reads st's source file through (see
// source.Share).
func (e *engine) source(f *fileio.File, st *fileio.Stat) verify.Source {
	return e.opt.share.Reader(e.opt.shareID, f, st)
}

// passSource tells the share, if any, that this run is done with a source
// file.
func (e *engine) passSource(st *fileio.Stat) {
	if st.IsRegular() {
		e.opt.share.Pass(e.opt.shareID, st)
	}
}
