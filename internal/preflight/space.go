package preflight

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

type devIno struct{ dev, ino uint64 }

// joinRel is the slash-separated path of name in the directory dir, both
// relative to a root ("" is the root).
func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// SpaceConfig is what the space check needs to know of a run.
type SpaceConfig struct {
	DstRoot string // the plan's destination root
	Roots   []Root // the plan's roots
	// OpenRoot opens a directory named by path (a root of the run).
	OpenRoot func(path string) (*fileio.Dir, error)
	// Excluded reports whether the run's filters leave out n, an entry
	// of the source directory d at rel below the source root root; nil
	// leaves out nothing.
	Excluded func(root string, d *fileio.Dir, rel string, n fileio.DirEntry) bool
	// Dereference: the run follows symlinks in the sources (-L).
	Dereference bool
	// Dedup: the run may share files of equal content (--dedup not off).
	Dedup bool
	// Resumable reports whether a copy of a source file with stat st
	// takes up the temporary an interrupted run kept; nil: none does.
	Resumable func(st *fileio.Stat) bool
	// TempName is the temporary name of a file named name.
	TempName func(name string) string
	// MaxFileSize is the largest file a filesystem of type fsType holds,
	// 0 for no limit; nil: no limit.
	MaxFileSize func(fsType string) int64
}

// CheckSpace refuses a run that cannot fit on the destination, before the
// first byte is written (before DEST is even created). A ctx done stops the
// size pass, and the run is not refused.
//
// The walk is the scan, so what a run will write is not known up front.
// Most runs fit with room to spare: when the destination has more free
// space than the source filesystems use, with an eighth more for the
// destination's allocation units, nothing more is asked. Otherwise a size
// pass walks the sources (names and stats only, which the copy's own walk
// then finds cached) and adds up what the run must write at least: regular
// files whose name at the destination holds no file of the same size, each
// source inode once, a file that may be a duplicate of another (same size,
// dedup on) left out, each rounded up to the destination's allocation unit,
// and one unit per new directory for its entries. A file's temporary kept
// by an interrupted run, which the copy takes up, counts as written. Being a lower bound, it
// refuses only runs that cannot fit; one that passes may still run out of
// space if dedup finds less than the pass left out, as before.
func CheckSpace(ctx context.Context, cfg SpaceConfig) error {
	at := existingDir(cfg.DstRoot)
	sp, err := fileio.SpaceOf(at)
	if err != nil || !sp.Known() {
		return nil // the filesystem does not say (fusefat reports 0 free)
	}
	if used, ok := sourcesUsed(cfg.Roots); ok && sp.Free >= used+used/8 {
		return nil
	}
	maxFile := int64(0)
	if t, err := fileio.FSType(at); err == nil && cfg.MaxFileSize != nil {
		maxFile = cfg.MaxFileSize(t)
	}
	sz := &sizer{cfg: &cfg, ctx: ctx, unit: sp.Block, maxFile: maxFile, inodes: map[devIno]bool{}, dirs: map[devIno]bool{}, sizes: map[int64]bool{}}
	dst, _ := cfg.OpenRoot(cfg.DstRoot) // nil when it does not exist yet
	if dst != nil {
		defer dst.Close()
	}
	for _, r := range cfg.Roots {
		sd, err := cfg.OpenRoot(r.SrcDir)
		if err != nil {
			return nil // the walk reports it
		}
		dd := openRel(dst, r.DstRel, r.IsDir)
		sz.root = r.SrcDir
		if r.IsDir {
			if dd == nil {
				sz.need += sz.unit
			}
			sz.dir(sd, dd, "")
		} else if st, err := sd.StatFollow(r.Name); err == nil {
			sz.file(dd, r.DstRel, &st)
		}
		sd.Close()
		if dd != nil && dd != dst {
			dd.Close()
		}
		if ctx != nil && ctx.Err() != nil {
			return nil
		}
	}
	if sz.need > sp.Free {
		return refusal.New(cfg.DstRoot, fmt.Sprintf("no room for the copy: needs at least %s, %s free on %s", refusal.HumanBytes(sz.need), refusal.HumanBytes(sp.Free), at),
			"free some space or choose a larger destination; --no-space-check tries anyway")
	}
	return nil
}

// openRel opens the destination directory the root rel lands in (rel
// itself for a directory root, the root for a file root), or nil.
func openRel(dst *fileio.Dir, rel string, isDir bool) *fileio.Dir {
	if dst == nil || !isDir || rel == "" {
		return dst
	}
	d, err := dst.OpenSub(rel)
	if err != nil {
		return nil
	}
	return d
}

// existingDir is dir, or its nearest ancestor that exists.
func existingDir(dir string) string {
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// sourcesUsed is the space used on the filesystems that hold the sources,
// each counted once.
func sourcesUsed(roots []Root) (int64, bool) {
	seen := map[uint64]bool{}
	var used int64
	for _, r := range roots {
		d, err := fileio.OpenDir(r.SrcDir)
		if err != nil {
			return 0, false
		}
		st, err := d.Stat()
		d.Close()
		if err != nil {
			return 0, false
		}
		if seen[st.Dev] {
			continue
		}
		seen[st.Dev] = true
		sp, err := fileio.SpaceOf(r.SrcDir)
		if err != nil || !sp.Known() {
			return 0, false
		}
		used += sp.Used
	}
	return used, true
}

// sizer adds up what a run must write at least (see CheckSpace).
type sizer struct {
	cfg     *SpaceConfig
	ctx     context.Context
	unit    int64
	maxFile int64 // files larger are refused, not written
	need    int64
	inodes  map[devIno]bool // source files with several names, counted once
	dirs    map[devIno]bool // directories walked (-L can loop)
	sizes   map[int64]bool  // sizes met, when dedup may share equal files
	root    string          // the source root walked (the filters' root)
}

func (s *sizer) dir(sd, dd *fileio.Dir, rel string) {
	if st, err := sd.Stat(); err == nil {
		k := devIno{st.Dev, st.Ino}
		if s.dirs[k] {
			return
		}
		s.dirs[k] = true
	}
	names, err := sd.ReadDir()
	if err != nil {
		return
	}
	for _, n := range names {
		r := joinRel(rel, n.Name)
		if s.cfg.Excluded != nil && s.cfg.Excluded(s.root, sd, r, n) {
			continue
		}
		var st fileio.Stat
		if s.cfg.Dereference {
			st, err = sd.StatFollow(n.Name)
		} else {
			st, err = sd.Lstat(n.Name)
		}
		if err != nil {
			continue
		}
		switch {
		case st.IsDir():
			var sub *fileio.Dir
			if s.cfg.Dereference {
				sub, err = sd.OpenFollow(n.Name)
			} else {
				sub, err = sd.OpenSub(n.Name)
			}
			if err != nil {
				continue
			}
			var dsub *fileio.Dir
			if dd != nil {
				dsub, _ = dd.OpenSub(n.Name)
			}
			if dsub == nil {
				s.need += s.unit
			}
			s.dir(sub, dsub, r)
			sub.Close()
			if dsub != nil {
				dsub.Close()
			}
		case st.IsRegular():
			s.file(dd, n.Name, &st)
		}
		if s.ctx != nil && s.ctx.Err() != nil {
			return
		}
	}
}

func (s *sizer) file(dd *fileio.Dir, name string, st *fileio.Stat) {
	if st.Size == 0 || (s.maxFile > 0 && st.Size > s.maxFile) {
		return
	}
	if st.Nlink > 1 {
		k := devIno{st.Dev, st.Ino}
		if s.inodes[k] {
			return
		}
		s.inodes[k] = true
	}
	if dd != nil {
		if cur, err := dd.Lstat(name); err == nil && cur.IsRegular() && cur.Size == st.Size {
			return // perhaps unchanged
		}
	}
	if s.cfg.Dedup {
		if s.sizes[st.Size] {
			return // perhaps a duplicate
		}
		s.sizes[st.Size] = true
	}
	n := st.Size
	if b := st.Blocks * 512; b < n {
		n = b // holes the destination may keep
	}
	n = s.round(n)
	n -= s.kept(dd, name, st, n)
	s.need += n
}

func (s *sizer) round(n int64) int64 { return (n + s.unit - 1) / s.unit * s.unit }

// kept is the space, at most n, that the temporary an interrupted run kept
// of name already holds and the copy takes up rather than writing anew
// (Resumable): a regular file of one link no larger than the source.
// Without this a rerun that would resume is refused for want of the space
// its own temporary takes.
func (s *sizer) kept(dd *fileio.Dir, name string, st *fileio.Stat, n int64) int64 {
	if dd == nil || s.cfg.Resumable == nil || s.cfg.TempName == nil || !s.cfg.Resumable(st) {
		return 0
	}
	tmp, err := dd.Lstat(s.cfg.TempName(name))
	if err != nil || !tmp.IsRegular() || tmp.Nlink != 1 || tmp.Size > st.Size {
		return 0
	}
	k := tmp.Size
	if b := tmp.Blocks * 512; b < k {
		k = b
	}
	return min(s.round(k), n)
}
