package copyengine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/filter"
	"github.com/fastcopy/fastcopy/verify"
)

// destination is one destination's run of RunAll. The local directory
// tree, which the engine's pipeline copies to (localDest), is one kind; a
// destination of another kind (a remote store) is a second implementation
// of the same two methods over the same source side: it walks the sources
// with the run's filters, reads each file through the share, hashes what
// it reads and asks the hash cache's source half, and nothing of the
// local pipeline (staging, flushes, the lock, the read-back) stands in its
// way or needs to know it exists.
type destination interface {
	// where is the destination as given, for messages.
	where() string
	// run copies the sources to the destination and sums up what it did,
	// reading every source byte through src.
	run(ctx context.Context, src *sourceSide) (Summary, error)
}

// localDest is a destination directory on a filesystem of this machine:
// the engine's pipeline, with everything Run gives a destination alone.
type localDest struct {
	opt  Options
	plan *plan
}

func (d *localDest) where() string { return d.plan.dstRoot }

func (d *localDest) run(ctx context.Context, src *sourceSide) (Summary, error) {
	o := d.opt
	o.share, o.shareID = src.share, src.id
	return newEngine(o).runPlan(ctx, d.plan, src.start)
}

// runDestinations runs every destination at once over one source side,
// each reading through share (nil for one destination: it reads alone,
// copy_file_range too). A destination that fails does not stop the others.
func runDestinations(ctx context.Context, dests []destination, src sourceSide, share *sourceShare) []Result {
	res := make([]Result, len(dests))
	if len(dests) == 1 && share == nil {
		sum, err := dests[0].run(ctx, &src)
		res[0] = Result{sum, err}
		return res
	}
	var wg sync.WaitGroup
	for i, d := range dests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := src
			s.share, s.id = share, uint64(1)<<i
			defer share.leave(s.id)
			sum, err := d.run(ctx, &s)
			sum.BytesShared = share.handedTo(s.id)
			sum.BytesRead -= sum.BytesShared
			res[i] = Result{sum, err}
		}()
	}
	wg.Wait()
	return res
}

// sourceSide is what the destinations of one run share: the sources as
// planned, the filters, the share of their reads and the hash cache's
// source half. Each destination's run gets its own copy, with its own bit
// in the share (id).
type sourceSide struct {
	roots []rootSpec    // the sources (every destination's plan agrees on them)
	rules *filter.Rules // what the walk leaves out; nil: nothing
	deref bool          // symlinks inside the tree are followed (-L)
	cache *hashcache.Cache
	share *sourceShare // nil: the run reads alone
	id    uint64       // this run's bit in share
	start time.Time    // when the run began, for the summary's Elapsed
	vols  *volumes     // per source device, learned once (shared by the copies)
}

// volumes are the volume identities of the source devices.
type volumes struct {
	mu sync.Mutex
	m  map[uint64]hashcache.Volume
}

// newSourceSide is the source side of the destinations opt and p describe
// (the first destination's: RunAll refuses destinations that disagree on
// the sources).
func newSourceSide(opt *Options, p *plan, start time.Time) sourceSide {
	s := sourceSide{rules: opt.rules, deref: opt.Dereference, cache: opt.Cache, start: start, vols: &volumes{m: map[uint64]hashcache.Volume{}}}
	s.roots = make([]rootSpec, len(p.roots))
	for i, r := range p.roots {
		r.side = newCacheSide(r.srcDir)
		s.roots[i] = r
	}
	return s
}

// sourceFile is one entry of the sources, as the walk of a destination of
// another kind meets it.
type sourceFile struct {
	Rel    string      // where it lands, relative to the destination root ("/"-separated)
	Stat   fileio.Stat // the walk's stat (the target's, for a symlink followed under -L)
	Target string      // a symlink's target, when Stat is a symlink
	Err    error       // the entry could not be read (its directory, its stat): nothing else is set but Rel

	root *rootSpec
	dir  *fileio.Dir // the source directory holding it, open while the callback runs
	name string      // its name in dir
	rel  string      // relative to root.srcDir
}

// errSkipDir, returned by walk's callback for a directory, leaves the
// directory's entries out.
var errSkipDir = errors.New("skip this directory")

// walk calls fn for every entry of the sources that the filters keep, a
// directory before what it holds; fn's error stops the walk and is
// returned, except errSkipDir. A directory that cannot be read is one
// entry with Err set, and the walk goes on.
func (s *sourceSide) walk(ctx context.Context, fn func(f *sourceFile) error) error {
	for i := range s.roots {
		r := &s.roots[i]
		d, err := fileio.OpenDir(r.srcDir)
		if err != nil {
			if err := fn(&sourceFile{Rel: r.dstRel, Err: err}); err != nil {
				return err
			}
			continue
		}
		if !r.isDir {
			err = s.visit(ctx, d, r, r.name, "", fn)
		} else {
			err = s.walkDir(ctx, d, r, "", fn)
		}
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// walkDir walks the source directory d, rel below r's.
func (s *sourceSide) walkDir(ctx context.Context, d *fileio.Dir, r *rootSpec, rel string, fn func(f *sourceFile) error) error {
	ents, err := d.ReadDir()
	if err != nil {
		return fn(&sourceFile{Rel: joinRel(r.dstRel, rel), Err: err})
	}
	for _, n := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		sub := joinRel(rel, n.Name)
		if s.rules != nil && s.excluded(r, d, sub, n) {
			continue
		}
		if err := s.visit(ctx, d, r, n.Name, sub, fn); err != nil {
			return err
		}
	}
	if s.rules != nil && s.rules.PerDir() {
		if err := s.rules.Tree(r.srcDir).Err(rel); err != nil {
			return fn(&sourceFile{Rel: joinRel(r.dstRel, rel), Err: err})
		}
	}
	return nil
}

// excluded is the engine's rule (engine.excluded) for a source entry.
func (s *sourceSide) excluded(r *rootSpec, d *fileio.Dir, rel string, n fileio.DirEntry) bool {
	isDir := n.Type == fileio.ModeDir
	if n.Type == fileio.ModeSymlink && s.deref {
		st, err := d.StatFollow(n.Name)
		isDir = err == nil && st.IsDir()
	}
	return s.rules.ExcludedIn(r.srcDir, rel, isDir)
}

// visit stats the entry name of d (rel below r's directory; "" for a file
// root), calls fn for it and, for a directory, walks it.
func (s *sourceSide) visit(ctx context.Context, d *fileio.Dir, r *rootSpec, name, rel string, fn func(f *sourceFile) error) error {
	f := &sourceFile{Rel: r.dstRel, root: r, dir: d, name: name, rel: rel}
	if rel != "" {
		f.Rel = joinRel(r.dstRel, rel)
	}
	st, err := d.Lstat(name)
	if err == nil && st.IsSymlink() {
		if s.deref {
			st, err = d.StatFollow(name)
		} else {
			f.Target, err = d.Readlink(name)
		}
	}
	if err != nil {
		return fn(&sourceFile{Rel: f.Rel, Err: err})
	}
	f.Stat = st
	if err := fn(f); err != nil || !st.IsDir() {
		if errors.Is(err, errSkipDir) {
			return nil
		}
		return err
	}
	sd, err := d.OpenSub(name)
	if err != nil {
		return fn(&sourceFile{Rel: f.Rel, Err: err})
	}
	defer sd.Close()
	return s.walkDir(ctx, sd, r, rel, fn)
}

// read streams the regular file f to sink through the share and returns
// its xxh128 digest and the bytes read from the source itself. The file
// read must be the one the walk saw and must hold still while it is read
// (its stat before and after): else the error is ErrSourceChanged and
// sink's bytes are not the file's.
func (s *sourceSide) read(f *sourceFile, sink verify.Sink, buf []byte) (verify.Sum, int64, error) {
	defer s.pass(f)
	fh, err := f.dir.Open(f.name, s.deref)
	if err != nil {
		return verify.Sum{}, 0, err
	}
	defer fh.Close()
	if cur, err := fh.Stat(); err != nil {
		return verify.Sum{}, 0, err
	} else if changed(&f.Stat, &cur) {
		return verify.Sum{}, 0, fmt.Errorf("%w: it is not the file the walk saw", ErrSourceChanged)
	}
	sum, n, err := verify.Stream(s.share.reader(s.id, fh, &f.Stat), f.Stat.Size, false, buf, sink)
	if cur, serr := fh.Stat(); serr == nil && changed(&f.Stat, &cur) {
		return verify.Sum{}, n, ErrSourceChanged // a short read of a file cut meanwhile too
	} else if err == nil {
		err = serr
	}
	if err != nil {
		return verify.Sum{}, n, err
	}
	return sum, n, nil
}

// pass tells the share this run is done with f without reading it (it
// was found unchanged at the destination), so that nothing is kept for it.
func (s *sourceSide) pass(f *sourceFile) {
	if f.Stat.IsRegular() {
		s.share.pass(s.id, &f.Stat)
	}
}

// cached returns the digest the hash cache holds for f, when its entry
// still vouches for the file as the walk found it; no read is needed then.
func (s *sourceSide) cached(f *sourceFile) (verify.Sum, bool) {
	if s.cache == nil || !f.Stat.IsRegular() || f.root == nil {
		return verify.Sum{}, false
	}
	ent, ok := s.cache.Get(f.root.side.key(f.rel))
	if !ok || !ent.Valid(fileState(&f.Stat, s.volume(f)), f.root.side.policy) {
		return verify.Sum{}, false
	}
	return ent.Sum, true
}

// remember records in the hash cache that f, as the walk found it, holds
// sum, read in a read that began at started.
func (s *sourceSide) remember(f *sourceFile, sum verify.Sum, started time.Time) {
	if s.cache == nil || !f.Stat.IsRegular() || f.Stat.Size == 0 || f.root == nil {
		return
	}
	vol := s.volume(f)
	if vol == 0 {
		return // a volume with no identity: an entry could never be trusted
	}
	st := &f.Stat
	s.cache.Put(f.root.side.key(f.rel), hashcache.Entry{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Sum: sum, HashedAt: started.UnixNano(), Volume: vol})
}

// volume returns the identity of the volume f is on, learned once per
// device through its directory.
func (s *sourceSide) volume(f *sourceFile) hashcache.Volume {
	s.vols.mu.Lock()
	defer s.vols.mu.Unlock()
	if v, ok := s.vols.m[f.Stat.Dev]; ok {
		return v
	}
	var v hashcache.Volume
	if info, err := hashcache.Identify(f.dir.Path()); err == nil && info.Dev == f.Stat.Dev {
		v = info.Volume
	}
	s.vols.m[f.Stat.Dev] = v
	return v
}
