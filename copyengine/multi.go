package copyengine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fastcopy/fastcopy/internal/preflight"
	"github.com/fastcopy/fastcopy/internal/source"
)

// MaxDestinations is the most destinations one RunAll copies to.
const MaxDestinations = source.MaxRuns

// Result is one destination's outcome of RunAll: what Run would have
// returned for it alone.
type Result struct {
	Summary Summary
	Err     error
}

// RunAll copies the same sources to several destinations at once, reading
// each source byte once (see source.Share). opts holds one Options per
// destination; they differ in Dest and in what is the destination's own
// (Stats, Manifest, OnEvent, OnFlush) and agree in Sources. Each
// destination is a run of its own, with everything Run gives it alone: its
// lock, its staging, its flushes and read-back from its own device, its
// side of the hash cache (opts may share one Cache), its summary and error.
// A destination that fails (full, gone, a file that does not verify) does
// not stop the others.
//
// A request refused for one destination as it is made (a bad option, a
// destination inside the source or inside another destination) is refused
// for all, before anything is written: RunAll returns that refusal and no
// results. A refusal a destination meets once its run has started (not
// enough free space, --delete's guards) is that destination's Err.
func RunAll(ctx context.Context, opts []Options) ([]Result, error) {
	start := time.Now()
	plans, err := planAll(opts)
	if err != nil {
		return nil, err
	}
	dests := make([]destination, len(opts))
	for i := range opts {
		dests[i] = &localDest{opt: opts[i], plan: plans[i]}
	}
	var share *source.Share
	if len(dests) > 1 {
		share = source.NewShare(len(dests), source.Budget())
	}
	return runDestinations(ctx, dests, newSourceSide(&opts[0], plans[0], start), share), nil
}

// planAll checks every destination's options and plan, and that no
// destination is another's, or inside it.
func planAll(opts []Options) ([]*plan, error) {
	if len(opts) == 0 {
		return nil, refuse("", "no destination given", "name a destination")
	}
	if len(opts) > MaxDestinations {
		return nil, refuse(opts[MaxDestinations].Dest, fmt.Sprintf("at most %d destinations in one run", MaxDestinations), "split the destinations over several runs")
	}
	plans := make([]*plan, len(opts))
	for i := range opts {
		if err := opts[i].Check(); err != nil {
			return nil, err
		}
		ro := opts[i].recordOptions()
		if err := ro.PrepareBag(); err != nil { // the bag's folders, or its refusal (internal/records); a dry run makes nothing
			return nil, err
		}
		if i > 0 && !slices.Equal(opts[i].Sources, opts[0].Sources) {
			return nil, refuse(opts[i].Dest, "every destination of one run copies the same sources", "run once per set of sources")
		}
		p, err := makePlan(opts[i].Sources, opts[i].Dest)
		if err != nil {
			return nil, err
		}
		plans[i] = p
	}
	dests := make([]preflight.Dest, len(plans))
	for i := range plans {
		dests[i] = preflight.Dest{Root: plans[i].dstRoot, Manifest: opts[i].Manifest}
	}
	if err := preflight.CheckDests(dests); err != nil { // apart, and each manifest its own, outside the others
		return nil, err
	}
	return plans, nil
}
