package copyengine

import (
	"fmt"
	"sync"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// A dry run takes the decisions the real run would take, by the same code
// where it can: the decider (with its cache lookups), the check of files
// whose size matches (checkEntry reads both sides, as the real run does),
// the judgement of further hard-link names, and the placement of
// duplicates (dryDedup). Each writing step is left out: fixMeta and
// fixTimes only say that they would change something, no cache entry is
// stored, nothing is created, linked or renamed.

// skipWrite is the dry run's gate, the one place the engine asks whether
// this is a dry run. It is asked at the moment of a write or a removal
// that the real run's decisions lead to, and where the real run prepares
// for its writes only (the destination's lock and creation, the probes
// that write in DEST, the space check, the read window and prefetching of
// the data it copies, the index that places duplicates by link or clone):
// true in a dry run, whose caller then counts and reports what the write
// would have done (the event says "would", see emit) and writes nothing.
// Everything before such a moment, every decision, is the real run's.
func (e *engine) skipWrite() bool { return e.opt.DryRun }

// wouldRead counts, in a dry run, what the real run reads to write a
// regular file of size bytes: its source once (hashed as it is copied, or
// read once for the placement of a duplicate), and the copy again when it
// is read back. A duplicate the dry run hashed to place it is that same
// read, so wouldDedup does not count its own. (A clone read nothing, a
// resumed copy reads only what it did not keep: a dry run counts a copy.)
func (cp *copier) wouldRead(size int64) {
	e := cp.e
	n := size
	if e.opt.Verify != VerifyOff {
		n += size
	}
	e.stats.BytesRead.Add(n)
}

// wouldKeepReplaced is, in a dry run, the keeping of what en's copy
// replaces in DEST under --backup-dir (keepReplaced, beforeReplace): it
// counts and reports the backup, and says false when the real run could
// not keep it (the entry then fails, as it would).
func (cp *copier) wouldKeepReplaced(c *chunk, en *entry, rel string) bool {
	e := cp.e
	if en.dstSt == nil || c.dst == nil || !e.backups.on() {
		return true
	}
	if err := e.backups.beforeReplace(c.dst.d, en.dstName, rel); err != nil {
		e.fail(rel, err)
		return false
	}
	return true
}

// wouldStage is, in a dry run, stageDir's judgement of a new directory
// made in parent (nil: one the run would make too) where it tells without
// writing (destfs.Info.WouldStage); Summary.StagingNote says why one is
// not staged.
func (sg *stager) wouldStage(parent *handle) {
	e := sg.e
	var d *fileio.Dir
	if parent != nil {
		d = parent.d
	}
	e.fs.info.WouldStage(d, func(note string) { e.count(func(s *Summary) { s.StagingNote = note }) },
		func(note string) {
			e.count(func(s *Summary) {
				if s.StagingNote == "" {
					s.StagingNote = note
				}
			})
		})
}

// wouldLink judges a further name of a source inode as linkOne does,
// writing nothing: skipped when its name already leads to the first
// name's inode, which is unchanged; linked otherwise.
func (dp *deduper) wouldLink(f linkFollower) error {
	e := dp.e
	if err := f.group.leaderErr(); err != nil {
		return err
	}
	if e.dstRoot != nil {
		cur, err := e.dstRoot.Lstat(f.rel)
		if want := f.group.ino; err == nil && want != (devIno{}) && (devIno{cur.Dev, cur.Ino}) == want {
			e.decide.skip(f.rel, f.st.Size, false, f.group.sum)
			e.mover.Note(f.mv, verify.Sum{})
			return nil
		}
		if err == nil && e.backups.on() {
			// The name is replaced by the link: what it holds is kept
			// first (linkOne).
			dir, name := splitRel(f.rel)
			if d, derr := e.dstRoot.OpenBeneath(dir); derr == nil {
				err = e.backups.beforeReplace(d, name, f.rel)
				d.Close()
				if err != nil {
					return err
				}
			}
		}
	}
	if f.clash != nil {
		return f.clash
	}
	e.count(func(s *Summary) { s.Linked++ })
	e.stats.FilesDone.Add(1)
	e.stats.BytesDone.Add(f.st.Size)
	e.event(ActLink, f.rel)
	e.mover.Note(f.mv, verify.Sum{})
	return nil
}

// dryDedup is the dry run's stand-in for the content index: the files it
// would write, by size, each hashed only once another file of its size
// comes (as the real run hashes only files whose size collides).
type dryDedup struct {
	mu     sync.Mutex
	bySize map[int64][]*dryTarget
	// dest are the files DEST holds already, as the hash cache knows
	// them (loadDestTargets), by size.
	dest   map[int64][]*dedup.Target
	loaded bool
	// destOnce, destDev and destType are DEST's device and filesystem
	// type, or its nearest existing parent's when the run would make it.
	destOnce sync.Once
	destDev  uint64
	destType string
}

// destFS is DEST's device and filesystem type in a dry run: its own, or
// where the run would make it, its nearest existing parent's.
func (dd *dryDedup) destFS(e *engine) (uint64, string) {
	dd.destOnce.Do(func() {
		if e.dstRoot != nil {
			dd.destDev, dd.destType = e.dstDev, e.fs.info.FSType()
			return
		}
		path := fileio.NearestExisting(e.dstRootPath)
		d, err := fileio.OpenDir(path)
		if err != nil {
			return
		}
		defer d.Close()
		if st, err := d.Stat(); err == nil {
			dd.destDev = st.Dev
		}
		dd.destType, _ = fileio.FSType(path)
	})
	return dd.destDev, dd.destType
}

// fsType is DEST's filesystem type in a dry run (destFS).
func (dd *dryDedup) fsType(e *engine) string {
	_, t := dd.destFS(e)
	return t
}

// wouldClone says whether the real run would clone a regular file of
// stat st (transfer.Config.MayClone): not empty, clones allowed, on DEST's filesystem,
// one of a type that clones (the dry run cannot try one).
func (dd *dryDedup) wouldClone(e *engine, st *fileio.Stat) bool {
	if st.Size == 0 || e.opt.Reflink == ReflinkNever {
		return false
	}
	dev, t := dd.destFS(e)
	return st.Dev == dev && clonesByType(t)
}

// dryTarget is a file the dry run would write, which later ones may share.
type dryTarget struct {
	src    *handle
	name   string
	en     entry
	sum    verify.Sum
	hashed bool
	meta   dedup.Meta
}

// wouldDedup reports whether the real run would place en by sharing the
// data of a file it writes before (and how: a clone or a hard link), or
// otherwise notes en as such a file. It hashes what the real run hashes:
// files whose size another file of the run has.
func (dp *deduper) wouldDedup(c *chunk, en *entry, buf []byte) (act Action, ok bool) {
	e := dp.e
	if e.opt.Dedup == dedup.Off || en.st.Size == 0 || !en.st.IsRegular() {
		return "", false
	}
	dd := &dp.dry
	dd.mu.Lock()
	defer dd.mu.Unlock()
	if dd.bySize == nil {
		dd.bySize = map[int64][]*dryTarget{}
	}
	if !dd.loaded {
		dd.loaded = true
		dp.loadDryDestTargets()
	}
	me := &dryTarget{src: c.src, name: en.name, en: *en, meta: dp.dedupMeta(&en.st)}
	list := dd.bySize[en.st.Size]
	if len(list) > 0 || len(dd.dest[en.st.Size]) > 0 {
		sum, err := dp.hashSource(c.src.d, en, buf)
		if err != nil {
			return "", false // the real run copies it and reports what it finds
		}
		// This read is the one wouldRead counts for en, unless the copy
		// reads en again: a clone hashes as it clones, and a file larger
		// than buf (or sparse) is not written from the buffer read here
		// (readSource's whole), while a shared one is placed from it.
		again := en.st.Sparse() || en.st.Size > int64(len(buf)) || e.dedupe.dry.wouldClone(e, &en.st)
		defer func() {
			if ok || !again {
				e.stats.BytesRead.Add(-en.st.Size)
			}
		}()
		me.sum, me.hashed = sum, true
		for _, t := range list {
			if !t.hashed {
				s, err := dp.hashSource(t.src.d, &t.en, buf)
				if err != nil {
					continue
				}
				e.stats.BytesRead.Add(-t.en.st.Size) // read by its copy (wouldRead)
				t.sum, t.hashed = s, true
			}
			if t.sum != me.sum {
				continue
			}
			if a, shares := dp.wouldShare(t, me); shares {
				return a, true
			}
		}
		for _, t := range dd.dest[en.st.Size] {
			if t.Sum != me.sum {
				continue
			}
			if a, shares := dp.wouldShareDest(t, me, en, buf); shares {
				return a, true
			}
		}
	}
	me.src.retain()
	dd.bySize[en.st.Size] = append(list, me)
	return "", false
}

// wouldShare says how the real run would share t's data with me: a clone
// where the destination's filesystem is one that clones (--dedup auto or
// clone), else a hard link where the metadata is the same (auto,
// hardlink).
func (dp *deduper) wouldShare(t, me *dryTarget) (Action, bool) {
	e := dp.e
	if e.opt.Dedup != dedup.Hardlink && e.opt.Reflink != ReflinkNever && clonesByType(e.dedupe.dry.fsType(e)) {
		return ActDedupClone, true
	}
	if e.opt.Dedup == dedup.Clone || !e.fs.hasLinks() || t.meta != me.meta {
		return "", false
	}
	return ActDedupLink, true
}

// clonesByType says whether a filesystem of this type clones (FICLONE).
func clonesByType(fsType string) bool {
	switch fsType {
	case "btrfs", "xfs", "bcachefs":
		return true
	}
	return false
}

// releaseDry lets go of the source directories the dry run kept for
// hashing later.
func (dp *deduper) releaseDry() {
	dd := &dp.dry
	dd.mu.Lock()
	defer dd.mu.Unlock()
	for _, list := range dd.bySize {
		for _, t := range list {
			t.src.release()
		}
	}
	dd.bySize = nil
}

// wouldFixMeta is fixMeta's judgement without the change: whether the
// owner or mode would be brought up to date.
func (dc *decider) wouldFixMeta(en *entry) {
	if en.st.IsSymlink() {
		return
	}
	if _, _, _, _, differs := dc.metaWanted(en); differs {
		en.fixed = true
	}
}

// leaderErr says why a further name of g cannot be linked to its first
// name (not copied, or failed to copy); nil once the first name is in place.
func (g *linkGroup) leaderErr() error {
	select {
	case <-g.done:
	default:
		return fmt.Errorf("hard link to %q: its first name was not copied", g.leaderRel)
	}
	if !g.ok {
		return fmt.Errorf("hard link to %q: its first name failed to copy", g.leaderRel)
	}
	return nil
}

// loadDryDestTargets is loadDestTargets for a dry run: the files the
// destination already holds, as the hash cache recorded them, which the
// real run offers a new file of the same content.
func (dp *deduper) loadDryDestTargets() {
	if dp.e.opt.Dedup == dedup.Off {
		return
	}
	dp.dry.dest = map[int64][]*dedup.Target{}
	dp.destContent(func(t *dedup.Target) {
		dp.dry.dest[t.Size] = append(dp.dry.dest[t.Size], t)
	})
}

// wouldShareDest says whether the real run would share the data of t, a
// file DEST held before the run, with me: t must still be as the cache
// recorded it and still hold the digest (it is read again, as the real run
// reads it), and not be en's own destination; then a clone where the
// filesystem clones, else a hard link when its metadata is the copy's.
func (dp *deduper) wouldShareDest(t *dedup.Target, me *dryTarget, en *entry, buf []byte) (Action, bool) {
	e := dp.e
	if e.dstRoot == nil {
		return "", false
	}
	placed, ok := t.InPlace()
	if !ok {
		return "", false
	}
	tdir, name := splitRel(t.Rel)
	td, err := e.dstRoot.OpenBeneath(tdir)
	if err != nil {
		return "", false
	}
	defer td.Close()
	cur, err := td.Lstat(name)
	if err != nil || !stillPlaced(&cur, placed) {
		return "", false
	}
	if en.dstSt != nil && en.dstSt.Dev == cur.Dev && en.dstSt.Ino == cur.Ino {
		return "", false
	}
	sum, _, err := e.decide.hashDest(td, name, buf, false)
	if err != nil || sum != me.sum {
		return "", false
	}
	if e.opt.Dedup != dedup.Hardlink && e.opt.Reflink != ReflinkNever && clonesByType(e.dedupe.dry.fsType(e)) {
		return ActDedupClone, true
	}
	tmeta := dedup.Meta{Mode: cur.Mode & 0o7777, Uid: cur.Uid, Gid: cur.Gid, Mtime: cur.Mtime}
	if e.opt.Dedup == dedup.Clone || !e.fs.hasLinks() || tmeta != me.meta {
		return "", false
	}
	return ActDedupLink, true
}

// wouldLoseSymlink reports, in a dry run, a symlink the destination's
// filesystem cannot hold (FAT, exFAT: the type tells), as the real run
// reports it once its symlink call fails: not kept, and said once per run.
func (dc *decider) wouldLoseSymlink(en *entry, rel string) bool {
	e := dc.e
	if !en.st.IsSymlink() || !e.fs.info.SymlinksLostByType() {
		return false
	}
	e.fs.cannotKeep(lostSymlinks, fmt.Errorf("%w: the filesystem has no symlinks", fileio.ErrUnsupported))
	e.report(&outcome.Outcome{Kind: outcome.Placed, Action: ActNotKept, Path: rel})
	return true
}
