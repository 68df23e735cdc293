package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/filter"
	"github.com/fastcopy/fastcopy/internal/refusal"
	"github.com/fastcopy/fastcopy/verify"
)

// Side is what the destinations of one run share: the sources as
// planned, the filters, the share of their reads and the hash cache's
// source half. Each destination's run gets its own copy, with its own bit
// in the share (ID). A destination of any kind reads the sources through
// it: Walk with the run's filters, Read through the share, checked
// against the walk's stat, Cached and Remember for the cache.
type Side struct {
	Roots []Root        // the sources
	Rules *filter.Rules // what the walk leaves out; nil: nothing
	Deref bool          // symlinks inside the tree are followed (-L)
	Cache *hashcache.Cache
	Share *Share    // nil: the run reads alone
	ID    uint64    // this run's bit in Share
	Start time.Time // when the run began, for its summary
	vols  *volumes  // per source device, learned once (shared by the copies)
}

// Root is one source: a directory walked, or one file of a directory.
type Root struct {
	Dir    string // the directory walked (IsDir) or holding the file
	IsDir  bool
	Name   string         // for a file: its name in Dir
	DstRel string         // where it lands, relative to the destination root
	Side   hashcache.Side // the cache's view of Dir
}

// NewSide is the source side of roots, filtered by rules.
func NewSide(roots []Root, rules *filter.Rules, deref bool, cache *hashcache.Cache, start time.Time) Side {
	return Side{Roots: roots, Rules: rules, Deref: deref, Cache: cache, Start: start, vols: &volumes{m: map[uint64]hashcache.Volume{}}}
}

// For is the copy of s that run id of share reads through.
func (s Side) For(share *Share, id uint64) *Side {
	s.Share, s.ID = share, id
	return &s
}

// volumes are the volume identities of the source devices.
type volumes struct {
	mu sync.Mutex
	m  map[uint64]hashcache.Volume
}

// File is one entry of the sources, as the walk of a destination of
// another kind meets it.
type File struct {
	Rel    string      // where it lands, relative to the destination root ("/"-separated)
	Stat   fileio.Stat // the walk's stat (the target's, for a symlink followed under -L)
	Target string      // a symlink's target, when Stat is a symlink
	Err    error       // the entry could not be read (its directory, its stat): nothing else is set but Rel

	root *Root
	dir  *fileio.Dir // the source directory holding it, open while the callback runs
	name string      // its name in dir
	rel  string      // relative to root.Dir
}

// ErrSkipDir, returned by walk's callback for a directory, leaves the
// directory's entries out.
var ErrSkipDir = errors.New("skip this directory")

// walk calls fn for every entry of the sources that the filters keep, a
// directory before what it holds; fn's error stops the walk and is
// returned, except ErrSkipDir. A directory that cannot be read is one
// entry with Err set, and the walk goes on.
func (s *Side) Walk(ctx context.Context, fn func(f *File) error) error {
	for i := range s.Roots {
		r := &s.Roots[i]
		d, err := fileio.OpenDir(r.Dir)
		if err != nil {
			if err := fn(&File{Rel: r.DstRel, Err: err}); err != nil {
				return err
			}
			continue
		}
		if !r.IsDir {
			err = s.visit(ctx, d, r, r.Name, "", fn)
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
func (s *Side) walkDir(ctx context.Context, d *fileio.Dir, r *Root, rel string, fn func(f *File) error) error {
	l := Lister{Rules: s.Rules, Deref: s.Deref}
	ls, err := l.Read(d, r.Dir, rel)
	if err != nil {
		return fn(&File{Rel: join(r.DstRel, rel), Err: err})
	}
	for i, n := range ls.Names {
		if err := ctx.Err(); err != nil {
			return err
		}
		sub := join(rel, n.Name)
		if ls.Excludes(i, sub) {
			continue
		}
		if err := s.visit(ctx, d, r, n.Name, sub, fn); err != nil {
			return err
		}
	}
	if err := ls.RuleErr(); err != nil {
		return fn(&File{Rel: join(r.DstRel, rel), Err: err})
	}
	return nil
}

// Excluded reports whether rules leave out n, an entry of the source
// directory d at rel (relative to the source root root): an excluded
// directory is neither copied nor walked. A symlink is a directory when
// it leads to one and symlinks are followed (deref); d may be nil, and
// then it is not. Every walk of the sources asks this one rule.
func Excluded(rules *filter.Rules, deref bool, root string, d *fileio.Dir, rel string, n fileio.DirEntry) bool {
	if rules == nil {
		return false
	}
	isDir := n.Type == fileio.ModeDir
	if n.Type == fileio.ModeSymlink && deref && d != nil {
		st, err := d.StatFollow(n.Name)
		isDir = err == nil && st.IsDir()
	}
	return rules.ExcludedIn(root, rel, isDir)
}

// visit stats the entry name of d (rel below r's directory; "" for a file
// root), calls fn for it and, for a directory, walks it.
func (s *Side) visit(ctx context.Context, d *fileio.Dir, r *Root, name, rel string, fn func(f *File) error) error {
	f := &File{Rel: r.DstRel, root: r, dir: d, name: name, rel: rel}
	if rel != "" {
		f.Rel = join(r.DstRel, rel)
	}
	st, err := d.Lstat(name)
	if err == nil && st.IsSymlink() {
		if s.Deref {
			st, err = d.StatFollow(name)
		} else {
			f.Target, err = d.Readlink(name)
		}
	}
	if err != nil {
		return fn(&File{Rel: f.Rel, Err: err})
	}
	f.Stat = st
	if err := fn(f); err != nil || !st.IsDir() {
		if errors.Is(err, ErrSkipDir) {
			return nil
		}
		return err
	}
	sd, err := d.OpenSub(name)
	if err != nil {
		return fn(&File{Rel: f.Rel, Err: err})
	}
	defer sd.Close()
	return s.walkDir(ctx, sd, r, rel, fn)
}

// read streams the regular file f to sink through the share and returns
// its xxh128 digest and the bytes read from the source itself. The file
// read must be the one the walk saw and must hold still while it is read
// (its stat before and after): else the error is refusal.ErrSourceChanged and
// sink's bytes are not the file's.
func (s *Side) Read(f *File, sink verify.Sink, buf []byte) (verify.Sum, int64, error) {
	defer s.Pass(f)
	fh, err := f.dir.Open(f.name, s.Deref)
	if err != nil {
		return verify.Sum{}, 0, err
	}
	defer fh.Close()
	if cur, err := fh.Stat(); err != nil {
		return verify.Sum{}, 0, err
	} else if Changed(&f.Stat, &cur) {
		return verify.Sum{}, 0, fmt.Errorf("%w: it is not the file the walk saw", refusal.ErrSourceChanged)
	}
	sum, n, err := verify.Stream(s.Share.Reader(s.ID, fh, &f.Stat), f.Stat.Size, false, buf, sink)
	if cur, serr := fh.Stat(); serr == nil && Changed(&f.Stat, &cur) {
		return verify.Sum{}, n, refusal.ErrSourceChanged // a short read of a file cut meanwhile too
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
func (s *Side) Pass(f *File) {
	if f.Stat.IsRegular() {
		s.Share.Pass(s.ID, &f.Stat)
	}
}

// cached returns the digest the hash cache holds for f, when its entry
// still vouches for the file as the walk found it; no read is needed then.
func (s *Side) Cached(f *File) (verify.Sum, bool) {
	if s.Cache == nil || !f.Stat.IsRegular() || f.root == nil {
		return verify.Sum{}, false
	}
	ent, ok := s.Cache.Get(f.root.Side.Key(f.rel))
	if !ok || !ent.Valid(hashcache.StateOf(&f.Stat, s.volume(f)), f.root.Side.Policy) {
		return verify.Sum{}, false
	}
	return ent.Sum, true
}

// remember records in the hash cache that f, as the walk found it, holds
// sum, read in a read that began at started.
func (s *Side) Remember(f *File, sum verify.Sum, started time.Time) {
	if s.Cache == nil || !f.Stat.IsRegular() || f.Stat.Size == 0 || f.root == nil {
		return
	}
	vol := s.volume(f)
	if vol == 0 {
		return // a volume with no identity: an entry could never be trusted
	}
	st := &f.Stat
	s.Cache.Put(f.root.Side.Key(f.rel), hashcache.Entry{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Ino: st.Ino, Sum: sum, HashedAt: started.UnixNano(), Volume: vol})
}

// volume returns the identity of the volume f is on, learned once per
// device through its directory.
func (s *Side) volume(f *File) hashcache.Volume {
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

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
