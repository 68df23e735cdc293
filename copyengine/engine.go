package copyengine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/cacheuse"
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/destlock"
	"github.com/fastcopy/fastcopy/internal/drives"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/filter"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/move"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/preflight"
	"github.com/fastcopy/fastcopy/internal/source"
	"github.com/fastcopy/fastcopy/internal/staging"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/internal/transfer"
	"github.com/fastcopy/fastcopy/verify"
)

// handle is a directory shared by the walker, the copy workers and the
// committer; the last release closes it.
type handle struct {
	d     *fileio.Dir
	rel   string // relative to the destination root (for a destination dir)
	dev   uint64 // the filesystem it is on (a destination dir, when devOK)
	devOK bool
	stage *stage // a destination dir still under its temporary name
	refs  atomic.Int32
}

func newHandle(d *fileio.Dir, rel string) *handle {
	h := &handle{d: d, rel: rel}
	h.refs.Store(1)
	return h
}

func (h *handle) retain() *handle { h.refs.Add(1); return h }

func (h *handle) release() {
	if h != nil && h.refs.Add(-1) == 0 {
		h.d.Close()
	}
}

// entry is one source entry to act on.
type entry struct {
	name    string // in the source directory
	dstName string // in the destination directory
	st      fileio.Stat
	dstSt   *fileio.Stat // the destination's entry, when one exists
	target  string       // a symlink's target
	group   *linkGroup   // the first name of a source inode with several
	srcKey  string       // the source's hash-cache key ("" without a cache)
	cache   *cached      // what the cache knows, when there is a destination to compare
	check   bool         // size matches: compare digests before deciding to copy
	gran    int64        // mtimes of the two sides are compared at this resolution (ns)
	srcRes  int64        // resolution of the source's times by its filesystem's type (ns; see transfer.SettleWindow)
	// srcInoLoose: the source's filesystem may give the file another
	// inode number at each lookup (see transfer.ChangedSince).
	srcInoLoose bool
	tmp         string       // the temporary name, when not tempName(dstName)
	src         *fileio.File // the source, when opened ahead (prefetch)
	asked       int64        // bytes the read window asked for ahead, -1 for a large file it holds others back for (readorder.go)
	fixed       bool         // unchanged, but its times, mode or owner were brought up to date
	// linkCopy: a further name of a source inode, copied as a file of its
	// own because the destination has no hard links.
	linkCopy bool
	resume   bool // a temporary of an earlier run was kept to take up (see transfer.Resume)
	// srcMoved: the source's cache entry records another stat than the
	// source has now, where the cache cannot vouch for DEST (lookupCache).
	srcMoved bool
	// contested: copied for a set of source names that are one name on
	// the destination; its content decides whether it is unchanged.
	contested bool
	// clash: the destination entry is held under another spelling than
	// the source's (the name, or a directory above it): it may be
	// replaced only by what it holds already (equal), else the entry
	// fails with clash (fold.go, respelled).
	clash *CollisionError
	equal bool // the destination entry was found to hold the source's content
	// extra: the source's digests in the formats the records need besides
	// xxh128, once it was read or its cache entry vouched for them
	// (internal/records/tee.go).
	extra map[string]string
}

// tempName is the name en is written under before it takes dstName: the
// usual one, unless a source file of the same directory has that name.
func (en *entry) tempName() string {
	if en.tmp != "" {
		return en.tmp
	}
	return destfs.TempName(en.dstName)
}

// chunk is a batch of entries of one source directory for one worker.
type chunk struct {
	src, dst *handle
	entries  []entry
	stage    *stage // dst is staged: its files are written under their own names
}

type devIno struct{ dev, ino uint64 }

// linkGroup tracks a source inode seen more than once.
type linkGroup struct {
	leaderRel string // destination path of the first name copied
	done      chan struct{}
	ok        bool              // the leader is in place under its final name
	sum       verify.Sum        // the source's digest, when ok and one was needed (needSum)
	extra     map[string]string // its digests in the records' other formats (entry.extra)
	ino       devIno            // when ok: the leader's inode, as verified or found unchanged (zero: not known)
}

type linkFollower struct {
	rel   string // destination path of this name
	group *linkGroup
	st    fileio.Stat
	tmp   string          // the temporary name, when not tempName of the name
	stage *stage          // the new directory it is placed in, held back until it is
	mv    move.Item       // --move: the source name, removed once the link is durable
	clash *CollisionError // the destination holds this name under another spelling (entry.clash)
}

type dirMeta struct {
	srcRoot string // the source directory path of the walk root
	srcRel  string
	dstRel  string
	st      fileio.Stat
	created bool // made by this run
}

// engine is the state of one run that its stages share: the options, the
// stats, the summary (under mu), the destination root, the process's
// identity, what is known of the filesystems, and the stages themselves,
// each a type that owns its own state (see docs/design.md, Pipeline).
type engine struct {
	opt    Options
	filter *filter.Rules // what the walk leaves out (see excluded); nil: nothing
	stats  *Stats
	ctx    context.Context
	cancel context.CancelFunc

	dstRoot     *fileio.Dir
	dstRootPath string
	dstDev      uint64
	root        bool // running as root: owners, devices, all xattrs
	euid        int
	umask       uint32 // the process's, when umaskKnown
	umaskKnown  bool
	egid        int
	groups      map[uint32]bool // the process's groups, asked once (owner)

	bufs sync.Pool

	mu  sync.Mutex
	sum Summary

	outcomes outcome.Hub   // what became of each entry, told by report (outcome.go)
	records  *recordKeeper // the manifest, the ASC MHL generation, the bag, the audit log's flushes (internal/records)

	ahead  aheadBudget     // descriptors opened ahead (prefetch, durable.Prefetch)
	clones transfer.Clones // where FICLONE failed, or worked

	cache   *hashcache.Cache // nil with --no-cache
	dstSide cacheSide

	fs      *fsInfo     // what the run learns of the filesystems it reads and writes
	drives  driveWatch  // the roots' filesystems, asked after I/O errors (internal/drives)
	written filesystems // every filesystem a destination directory is on

	// The stages.
	walker *walker
	decide *decider
	copier *copier
	commit *committer
	staged *stager      // directories made under temporary names, not yet in place
	made   *made.Record // what runs made in the destination root (internal/made)
	dedupe *deduper
	record *cacheuse.Recorder

	bw *throttle.Meter // --bwlimit (internal/throttle); nil without a limit
	// linkDest makes snapshots (--link-dest; linkdest.go).
	linkDest *linkDests
	// --delete, --backup-dir, --move (mirror.go, backupdir.go, move.go)
	mirror  *mirrorStage
	backups *backups
	mover   *move.Journal // nil without --move
	moves   moveStage     // what the journal asks of the run (move.go)
	// --scrub (scrub.go)
	scrub *scrubber
}

// Run copies opt.Sources to opt.Dest. It returns the summary and nil, or a
// fatal error, or ErrSomeFailed / ErrMismatch when the run finished but not
// every file made it (the summary names them). A cancelled ctx stops the run
// promptly, removes its temporaries and returns ctx's error.
func Run(ctx context.Context, opt Options) (Summary, error) {
	res, err := RunAll(ctx, []Options{opt})
	if err != nil {
		return Summary{}, err
	}
	return res[0].Summary, res[0].Err
}

// newEngine makes a run's shared state and its stages.
func newEngine(opt Options) *engine {
	e := &engine{opt: opt, stats: opt.Stats, filter: opt.rules}
	e.records = newRecordKeeper(e)
	e.fs = &fsInfo{e: e}
	e.drives.e = e
	e.record = cacheuse.NewRecorder(e.cacheUse())
	e.staged = &stager{e: e, dirs: staging.New(staging.Config{})} // its destination once it is open (openDest)
	e.dedupe = newDeduper(e)
	e.copier = &copier{e: e}
	e.walker = &walker{e: e}
	e.decide = &decider{e: e, links: map[devIno]*linkGroup{}}
	e.commit = &committer{e: e}
	e.linkDest = &linkDests{e: e}
	e.mirror, e.backups = &mirrorStage{e: e}, &backups{e: e}
	e.scrub = &scrubber{e: e}
	subscribeOutcomes(e)
	e.euid = fileio.Geteuid()
	e.umask, e.umaskKnown = fileio.Umask()
	e.groups = map[uint32]bool{}
	for _, g := range fileio.Groups() {
		e.groups[g] = true
	}
	e.ahead.max = aheadLimit(fileio.OpenLimit())
	e.egid = fileio.Getegid()
	e.root = e.euid == 0
	e.moves = moveStage{e}
	e.mover = e.moves.journal() // --move, nil without
	e.bufs.New = func() any { b := make([]byte, verify.BufSize); return &b }
	e.sum.Verify = opt.Verify
	if opt.Dedup != dedup.Off && !e.skipWrite() {
		e.dedupe.ix = dedup.NewIndex()
	}
	e.sum.DryRun = e.skipWrite()
	e.sum.Jobs, e.sum.JobsReason = opt.Jobs, opt.JobsReason // chosen by Check
	e.bw, e.sum.BwLimit = throttleFor(&opt), opt.BwLimit
	e.sum.ReadOrder, e.sum.ReadOrderReason = opt.ReadOrder, opt.ReadOrderReason
	return e
}

// runPlan checks the plan against the destination, makes or opens the
// destination and locks it, copies, and sums up.
func (e *engine) runPlan(ctx context.Context, p *plan, start time.Time) (Summary, error) {
	opt := e.opt
	ro := e.opt.recordOptions()
	if err := ro.CheckPlan(preflight.Plan{DstRoot: p.dstRoot, OntoFile: p.ontoFile, Roots: p.preflightRoots()}); err != nil { // the manifest's path, the ASC MHL history's folder (internal/records)
		return Summary{}, err
	}
	if !e.skipWrite() && !opt.NoSpaceCheck {
		e.ctx = ctx
		if err := e.checkSpace(p); err != nil {
			return Summary{}, err
		}
	}
	e.cache = opt.Cache
	if err := e.mirror.guard(p); err != nil { // --delete's guards, --backup-dir
		return Summary{}, err
	}
	defer e.backups.close()
	var undo closers
	defer undo.close()
	if err := e.openDest(p, &undo); err != nil {
		return Summary{}, err
	}
	defer e.record.Close()

	for i := range p.roots {
		e.drives.Add(drives.Root{Side: "source", Path: p.roots[i].srcDir})
	}
	defer e.drives.Close()

	e.ctx, e.cancel = context.WithCancel(ctx)
	defer e.cancel()
	err := e.run(p)
	if g := e.drives.Gone(); g != nil && ctx.Err() == nil && !errors.As(err, new(*DriveGoneError)) {
		err = e.drives.stopGone(g) // found gone after the copy had stopped
	}
	if err == nil && ctx.Err() == nil && !e.skipWrite() {
		err = e.drives.destStillThere()
	}
	e.sum.Elapsed = time.Since(start)
	e.sum.BytesRead = e.stats.BytesRead.Load()
	sort.Slice(e.sum.Failures, func(i, j int) bool { return e.sum.Failures[i].Path < e.sum.Failures[j].Path })
	e.records.NoteStopped(ctx.Err(), err) // the ASC MHL generation not written
	switch {
	case ctx.Err() != nil:
		return e.sum, ctx.Err()
	case err != nil:
		return e.sum, err
	case e.sum.Mismatches > 0:
		return e.sum, ErrMismatch
	case e.sum.Failed > 0:
		return e.sum, ErrSomeFailed
	case e.mover.Incomplete() != nil: // internal/move
		return e.sum, e.mover.Incomplete()
	case e.records.Err() != nil: // the ASC MHL generation or the bag's tag files not written
		return e.sum, e.records.Err()
	}
	return e.sum, nil
}

// closers are the releases of what a run holds, run in reverse order.
type closers []func()

func (c *closers) add(f func()) { *c = append(*c, f) }

func (c *closers) close() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

// openDest makes the destination root (when the plan says so) or opens
// it, locks it and notes what it is; undo gets what is to be released when
// the run ends.
func (e *engine) openDest(p *plan, undo *closers) error {
	opt := e.opt
	var made *fileio.Dir // the destination root, when this run made it
	if p.create && !e.skipWrite() {
		d, release, err := destlock.Make(p.dstRoot, opt.openRoot)
		if errors.Is(err, ErrLocked) {
			return err
		} else if err != nil {
			return refuse(p.dstRoot, "cannot create destination: "+ErrText(err), "check the parent directory exists and is writable")
		}
		undo.add(release)
		made = d
	}
	e.dstRootPath = p.dstRoot
	e.cacheSides(p)
	e.linkDest.open(p.dstRoot, undo)
	if p.create && e.skipWrite() {
		e.fs.probeCaps(nil) // DEST a dry run would make: its type is unknown
		return nil
	}
	d := made
	if d == nil {
		var err error
		d, err = e.opt.openRoot(p.dstRoot)
		if err != nil {
			return refuse(p.dstRoot, "cannot open destination: "+ErrText(err), "check it is a directory you can write to")
		}
	}
	undo.add(func() { d.Close() })
	if !e.skipWrite() {
		// A destination that existed when the run was planned, without
		// --delete (whose guards looked at DEST before the lock), may wait
		// out a lock held an instant: nothing the run decided depends on
		// what DEST held before it has the lock.
		var wait time.Duration
		if !p.create && !opt.Delete {
			wait = destlock.BusyFor
		}
		release, err := destlock.Lock(d, p.dstRoot, wait)
		if err != nil {
			return err
		}
		undo.add(release)
	}
	e.dstRoot = d
	e.loadMade(d, p.dstRoot)
	undo.add(e.made.Finish)
	e.staged.dirs = staging.New(staging.Config{Root: d, Made: e.made, Euid: e.euid})
	e.walker.dstDirs.Note(d)
	e.fs.probeCaps(d)
	e.drives.Add(drives.Root{Side: "destination", Path: p.dstRoot, Dir: d})
	if st, err := d.Stat(); err == nil {
		e.dstDev = st.Dev
		if e.cache != nil {
			e.fs.info.VolumeOf(d, st.Dev)
		}
		e.written.Add(st.Dev, d, false)
	}
	undo.add(e.written.Close)
	return nil
}

// cacheSides notes the hash cache, its own file (left out of the source
// walk) and the destination's side of the copy (the sources' were
// taken with the plan: rootSpec.side).
func (e *engine) cacheSides(p *plan) {
	opt := e.opt
	e.cache = opt.Cache
	var own source.Own
	if opt.Cache != nil {
		own = source.OwnOf(opt.Cache.Path())
	}
	e.walker.src = source.Lister{Rules: e.filter, Deref: opt.Dereference, Own: own, Faults: opt.hooks.faults}
	if !e.skipWrite() || !p.create {
		e.dstSide = hashcache.SideOf(p.dstRoot)
	}
}

func (e *engine) run(p *plan) error {
	jobs := e.sum.Jobs
	queued := jobs * 2
	if o := e.sum.ReadOrder; (o == ReadOrderDisk || o == ReadOrderInode) && !e.skipWrite() {
		queued = max(queued, readQueueChunks) // opened ahead in the read window's order (readorder.go)
	}
	e.copier.in = make(chan *chunk, queued)
	e.commit.prepare()

	var workers, committer sync.WaitGroup
	for i := 0; i < jobs; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			e.copier.worker()
		}()
	}
	committer.Add(1)
	go func() {
		defer committer.Done()
		e.commit.run()
	}()

	if e.dedupe.ix != nil {
		stop := context.AfterFunc(e.ctx, e.dedupe.ix.Close) // wake workers waiting on a duplicate
		defer stop()
	}
	e.scrub.pass() // before the walk: its findings change what the decider trusts
	e.walker.walk(p)
	close(e.copier.in)
	workers.Wait()
	close(e.commit.in)
	committer.Wait()
	if n := e.ahead.n.Load(); n != 0 && fileio.FaultsEnabled {
		// Test builds check the look-ahead's accounting: every descriptor
		// opened ahead was taken or closed by now.
		panic(fmt.Sprintf("copyengine: %d descriptors opened ahead were never released", n))
	}
	e.stats.ScanDone.Store(true)

	end := ending{e}
	return end.run(end.script())
}

func (e *engine) buf() *[]byte     { return e.bufs.Get().(*[]byte) }
func (e *engine) putBuf(b *[]byte) { e.bufs.Put(b) }

func (e *engine) event(a Action, rel string) { e.emit(Event{Action: a, Path: rel}) }

// fail records a per-file failure; the run goes on.
func (e *engine) fail(rel string, err error) {
	if e.ctx.Err() != nil {
		return // an interrupted run reports the interruption, not its fallout
	}
	if e.drives.judgeDrives(rel, err, true) {
		return // one error for the drive, not one per file (internal/drives)
	}
	if e.drives.Full(rel, err).Fallout {
		return // one error for a full destination (internal/drives): the first halts the run and is reported
	}
	e.report(&outcome.Outcome{Kind: outcome.Failed, Path: rel, Err: err})
}

func (e *engine) count(f func(s *Summary)) {
	e.mu.Lock()
	f(&e.sum)
	e.mu.Unlock()
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
