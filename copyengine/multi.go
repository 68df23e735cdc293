package copyengine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/namefold"
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
		if err := opts[i].prepareBag(); err != nil { // internal/records
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
	for i := range plans {
		for j := range i {
			if err := checkApart(plans[j].dstRoot, plans[i].dstRoot); err != nil {
				return nil, err
			}
			if opts[i].Manifest != "" && fileio.RealPath(opts[i].Manifest) == fileio.RealPath(opts[j].Manifest) {
				return nil, refuse(opts[i].Manifest, "two destinations would write this one manifest", "give each destination its own manifest")
			}
		}
		for j := range plans {
			// Inside its own destination: the run's own check says so
			// (records.Options.CheckPlan), as for a run alone.
			if m := opts[i].Manifest; j != i && m != "" && (inside(fileio.RealPath(plans[j].dstRoot), fileio.RealPath(m)) || overlapIn(m, plans[j].dstRoot)) {
				return nil, refuse(m, "the manifest would lie inside the destination "+quote(plans[j].dstRoot), "write it outside every destination")
			}
		}
	}
	return plans, nil
}

// checkApart refuses two destinations that are one directory, or one
// inside the other: the runs would copy into each other's copy and fight
// over one lock. Names are compared, and so are the directories that exist
// already, by identity: other spellings on a case-insensitive drive, or a
// bind mount, name one directory differently (overlapInside).
func checkApart(a, b string) error {
	ra, rb := fileio.RealPath(a), fileio.RealPath(b)
	if ka, kb := namefold.Key(ra, true), namefold.Key(rb, true); ka == kb || inside(ka, kb) || inside(kb, ka) {
		// Maybe other spellings of one name on a drive that folds them.
		ra, rb = spelled(ra), spelled(rb)
	}
	switch {
	case ra == rb || sameDir(ra, rb) || overlapSame(a, b):
		return refuse(b, "this destination is the same directory as "+quote(a), "name each destination once")
	case inside(ra, rb) || below(ra, rb) || overlapIn(b, a):
		return refuse(b, "this destination is inside the destination "+quote(a), "choose destinations apart from each other")
	case inside(rb, ra) || below(rb, ra) || overlapIn(a, b):
		return refuse(a, "this destination is inside the destination "+quote(b), "choose destinations apart from each other")
	}
	return nil
}

// spelled returns the real path p with each component that exists
// spelled as its directory lists it: a case-insensitive filesystem finds
// "backup" as "Backup", and so does this.
func spelled(p string) string {
	parts := strings.Split(strings.TrimPrefix(p, string(filepath.Separator)), string(filepath.Separator))
	cur := string(filepath.Separator)
	for i, name := range parts {
		next := filepath.Join(cur, name)
		if _, err := os.Lstat(next); err != nil {
			return filepath.Join(append([]string{cur}, parts[i:]...)...)
		}
		if ents, err := os.ReadDir(cur); err == nil && !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == name }) {
			k := namefold.Key(name, true)
			for _, e := range ents {
				if namefold.Key(e.Name(), true) == k {
					next = filepath.Join(cur, e.Name())
					break
				}
			}
		}
		cur = next
	}
	return cur
}

// sameDir reports whether a and b are one existing directory.
func sameDir(a, b string) bool {
	ai, aerr := os.Stat(a)
	bi, berr := os.Stat(b)
	return aerr == nil && berr == nil && os.SameFile(ai, bi)
}

// below reports whether an existing directory above p is dir.
func below(dir, p string) bool {
	di, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for cur := filepath.Dir(p); ; cur = filepath.Dir(cur) {
		if ci, err := os.Stat(cur); err == nil && os.SameFile(di, ci) {
			return true
		}
		if filepath.Dir(cur) == cur {
			return false
		}
	}
}

// inside reports whether the real path p lies below the real path dir.
func inside(dir, p string) bool {
	sep := string(filepath.Separator)
	return strings.HasPrefix(p, strings.TrimSuffix(dir, sep)+sep)
}
