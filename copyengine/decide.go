package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// decider is the stage that decides, for each entry the walker lists, what
// the copy does with it: skip it (unchanged), bring only its metadata up to
// date, make it a hard link to a name copied before, or copy it (and then
// whether a duplicate may share data). It asks the hash cache what it
// knows (cache.go) and how the destination folds names (fold.go).
type decider struct {
	e     *engine
	links map[devIno]*linkGroup // source inodes with several names, met so far (under e.mu)
}

// plan counts a non-directory entry and decides whether it needs work. It
// handles the unchanged case (and source hard links) itself.
func (dc *decider) plan(src, dst *handle, en *entry, dstRel string) bool {
	e := dc.e
	st := &en.st
	if st.IsSymlink() {
		t, err := src.d.Readlink(en.name)
		if err != nil {
			e.stats.FilesTotal.Add(1)
			e.fail(dstRel, err)
			return false
		}
		en.target = t
	}
	e.stats.FilesTotal.Add(1)
	if st.IsRegular() {
		e.stats.BytesTotal.Add(st.Size)
	}
	if err := e.fs.tooLarge(st); err != nil {
		e.fail(dstRel, err)
		return false
	}
	links := st.IsRegular() && st.Nlink > 1 && e.fs.hasLinks()
	if st.IsRegular() && st.Nlink > 1 && !links {
		en.linkCopy = e.fs.linkCopy(st)
	}
	keep := dc.keepsExisting(en) // --update, --ignore-existing (backup.go)
	// A source inode seen before becomes a hard link to its first copy.
	if links {
		k := devIno{st.Dev, st.Ino}
		e.mu.Lock()
		g, seen := e.decide.links[k]
		if !seen {
			g = &linkGroup{leaderRel: dstRel, done: make(chan struct{})}
			e.decide.links[k] = g
		} else if keep {
			e.mu.Unlock()
			dc.keepExisting(en, dstRel, nil)
			return false
		} else {
			f := linkFollower{rel: dstRel, group: g, st: *st, tmp: en.tmp, mv: e.mover.item(src, en, dstRel), clash: en.clash}
			if dst != nil && dst.stage != nil {
				// Its directory is published once the name is placed.
				f.stage = dst.stage
				f.stage.add()
			}
			e.dedupe.followers = append(e.dedupe.followers, f)
		}
		e.mu.Unlock()
		if seen {
			return false
		}
		en.group = g
		if keep {
			dc.keepExisting(en, dstRel, g)
			return false
		}
		if en.clash != nil && !dc.respelled(dst, en, dstRel) {
			close(g.done) // its other names fail with it
			return false
		}
		if dc.unchanged(dst, en) {
			g.sum = dc.skipUnchanged(dstRel, en)
			e.mover.add(src, en, dstRel, unchangedSum(en))
			g.extra = en.extra
			g.ok, g.ino = true, devIno{en.dstSt.Dev, en.dstSt.Ino}
			close(g.done)
			return false
		}
		return true
	}
	if keep {
		dc.keepExisting(en, dstRel, nil)
		return false
	}
	if en.clash != nil && !dc.respelled(dst, en, dstRel) {
		return false
	}
	if dc.unchanged(dst, en) {
		dc.skipUnchanged(dstRel, en)
		e.mover.add(src, en, dstRel, unchangedSum(en))
		return false
	}
	return true
}

// skip counts an unchanged entry and reports it once: as "metadata" when
// its times, mode or owner were brought up to date (fixed), else as "skip";
// sum is its digest, when known (zero otherwise).
func (dc *decider) skip(rel string, size int64, fixed bool, sum verify.Sum) {
	dc.e.report(skipOutcome(rel, size, fixed, sum))
}

// unchanged reports whether the destination already holds this entry: same
// type, and for files the same size and mtime (unless --force); for
// symlinks the same target. Differing permission bits or owner are brought
// up to date in place.
func (dc *decider) unchanged(dst *handle, en *entry) bool {
	e := dc.e
	d := en.dstSt
	if d == nil || e.opt.Force || d.Type() != en.st.Type() {
		return false
	}
	s := &en.st
	switch {
	case s.IsRegular():
		if !dc.sameContent(dst, en) {
			return false
		}
		if _, _, _, _, differs := dc.metaWanted(en); differs && d.Nlink > 1 {
			// A shared inode (a hard link) cannot take this file's new
			// mode without changing the other names: replace it instead.
			return false
		}
	case s.IsSymlink():
		if dst == nil {
			return false
		}
		t, err := dst.d.Readlink(en.dstName)
		return err == nil && t == en.target
	case s.Type() == fileio.ModeChar || s.Type() == fileio.ModeBlock:
		if d.Rdev != s.Rdev {
			return false
		}
	}
	if dst != nil {
		dc.fixMeta(dst, en) // in a dry run, only whether it would
	}
	return true
}
