package copyengine

import (
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// decider is the stage that decides, for each entry the walker lists, what
// the copy does with it: skip it (unchanged), bring only its metadata up to
// date, make it a hard link to a name copied before, or copy it (and then
// whether a duplicate may share data). It asks the hash cache what it
// knows (cache.go, internal/cacheuse) and how the destination folds names (internal/destfs). Its
// answer is a verdict; the walker carries it out (walker.carryOut), each
// action by the stage that owns it.
type decider struct {
	e     *engine
	mu    sync.Mutex            // guards links
	links map[devIno]*linkGroup // source inodes with several names, met so far
}

// verdictKind is what the decider found an entry needs.
type verdictKind int8

const (
	// needCopy: the copier writes it; a worker first reads both sides
	// where the stats and the cache could not settle it (en.check).
	needCopy verdictKind = iota
	// needFail: the entry fails with the verdict's err.
	needFail
	// needKeep: --update or --ignore-existing leave the destination as
	// it is (keepExisting).
	needKeep
	// needLink: a further name of a source inode met before, made a hard
	// link to the first name's copy once that is placed (the deduper's
	// followers).
	needLink
	// needSkip: the destination holds it already; only its metadata is
	// brought up to date, its mtime first where fixTimes is set.
	needSkip
)

// verdict is the decider's answer for one entry (plan): what it needs, and
// what carrying that out takes.
type verdict struct {
	kind verdictKind
	err  error // needFail: the reason
	// group is the link group of a source inode with several names: for
	// its first name en.group, which the entry's outcome completes; for
	// needLink the group of the first name it is linked to; nil for a
	// file with one name and for a further name kept as it is.
	group *linkGroup
	// fixTimes: needSkip, and the destination's mtime is to be set to the
	// source's (decider.fixTimes, recording timesSum); where it cannot
	// be, the file is copied instead.
	fixTimes bool
	timesSum verify.Sum
	hits     int64 // digests the cache answered for the decision
}

// plan decides whether a non-directory entry needs work, and what: it
// changes nothing but the decider's own record of the source inodes met
// and the entry's marks for the stages after it (en.target, en.linkCopy,
// en.group, en.check and the like).
func (dc *decider) plan(src, dst *handle, en *entry, dstRel string) verdict {
	e := dc.e
	st := &en.st
	if st.IsSymlink() {
		t, err := src.d.Readlink(en.name)
		if err != nil {
			return verdict{kind: needFail, err: err}
		}
		en.target = t
	}
	if err := e.fs.info.TooLarge(st); err != nil {
		return verdict{kind: needFail, err: err}
	}
	links := st.IsRegular() && st.Nlink > 1 && e.fs.info.HasLinks()
	if st.IsRegular() && st.Nlink > 1 && !links {
		en.linkCopy = e.fs.info.LinkCopy(st)
	}
	keep := dc.keepsExisting(en) // --update, --ignore-existing (update.go)
	var g *linkGroup
	if links {
		// A source inode seen before becomes a hard link to its first copy.
		var seen bool
		if g, seen = dc.group(devIno{st.Dev, st.Ino}, dstRel); seen {
			if keep {
				return verdict{kind: needKeep}
			}
			return verdict{kind: needLink, group: g}
		}
		en.group = g
	}
	switch {
	case keep:
		return verdict{kind: needKeep, group: g}
	case en.clash != nil && !dc.respelled(dst, en):
		return verdict{kind: needFail, err: en.clash, group: g} // its other names fail with it
	}
	v, same := dc.unchanged(dst, en)
	v.group = g
	if !same {
		v.kind = needCopy
	}
	return v
}

// group returns the link group of the source inode k, made with leader as
// its first name when it was not met before (seen false).
func (dc *decider) group(k devIno, leader string) (g *linkGroup, seen bool) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if g, seen = dc.links[k]; !seen {
		g = &linkGroup{leaderRel: leader, done: make(chan struct{})}
		dc.links[k] = g
	}
	return g, seen
}

// carryOut counts an entry the walker listed and carries out the decider's
// verdict v on it, each action by the stage that owns it: a failure is the
// engine's, a further name the deduper's, a source to remove the mover's, a
// digest to record the cache recorder's and the records'. It reports
// whether the entry goes to the copier.
func (wk *walker) carryOut(v verdict, src, dst *handle, en *entry, dstRel string) bool {
	e := wk.e
	e.stats.FilesTotal.Add(1)
	if en.st.IsRegular() {
		e.stats.BytesTotal.Add(en.st.Size)
	}
	if v.hits > 0 {
		e.count(func(s *Summary) { s.CacheHits += v.hits })
	}
	switch v.kind {
	case needFail:
		e.fail(dstRel, v.err)
		if v.group != nil {
			close(v.group.done)
		}
	case needKeep:
		e.decide.keepExisting(en, dstRel, v.group)
	case needLink:
		f := linkFollower{rel: dstRel, group: v.group, st: en.st, tmp: en.tmp, mv: e.moves.item(src, en, dstRel), clash: en.clash}
		if dst != nil {
			f.stage = dst.stage // its directory is published once the name is placed
		}
		e.dedupe.addFollower(f)
	case needSkip:
		if v.fixTimes && !e.decide.fixTimes(dst, en, v.timesSum, en.dstSt, true) {
			return true // copied instead
		}
		if dst != nil {
			e.decide.fixMeta(dst, en) // in a dry run, only whether it would
		}
		wk.skipUnchanged(src, en, dstRel, v.group)
	default:
		return true
	}
	return false
}

// skipUnchanged reports an entry the destination holds already, notes it
// for --move and records its digest; the first name of a source inode with
// several (g) is then done, in place as the destination holds it.
func (wk *walker) skipUnchanged(src *handle, en *entry, dstRel string, g *linkGroup) {
	e := wk.e
	sum := e.decide.skipUnchanged(dstRel, en)
	e.moves.note(src, en, dstRel, unchangedSum(en))
	if g != nil {
		g.sum = sum
		g.extra = en.extra
		g.ok, g.ino = true, devIno{en.dstSt.Dev, en.dstSt.Ino}
		close(g.done)
	}
}

// skip counts an unchanged entry and reports it once: as "metadata" when
// its times, mode or owner were brought up to date (fixed), else as "skip";
// sum is its digest, when known (zero otherwise).
func (dc *decider) skip(rel string, size int64, fixed bool, sum verify.Sum) {
	dc.e.report(skipOutcome(rel, size, fixed, sum))
}

// unchanged reports whether the destination already holds this entry
// (same true), and how it is skipped: same type, and for files the same
// size and mtime (unless --force); for symlinks the same target.
// Differing permission bits or owner are brought up to date in place by
// the skip (fixMeta), a differing mtime of a file that holds the same
// bytes too (v.fixTimes).
func (dc *decider) unchanged(dst *handle, en *entry) (v verdict, same bool) {
	e := dc.e
	v.kind = needSkip
	d := en.dstSt
	if d == nil || e.opt.Force || d.Type() != en.st.Type() {
		return v, false
	}
	s := &en.st
	switch {
	case s.IsRegular():
		if v = dc.sameContent(en); v.kind != needSkip {
			return v, false
		}
		if _, _, _, _, differs := dc.metaWanted(en); differs && d.Nlink > 1 {
			// A shared inode (a hard link) cannot take this file's new
			// mode without changing the other names: replace it instead.
			return v, false
		}
	case s.IsSymlink():
		if dst == nil {
			return v, false
		}
		t, err := dst.d.Readlink(en.dstName)
		return v, err == nil && t == en.target
	case s.Type() == fileio.ModeChar || s.Type() == fileio.ModeBlock:
		if d.Rdev != s.Rdev {
			return v, false
		}
	}
	return v, true
}
