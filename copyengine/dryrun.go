package copyengine

import (
	"fmt"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/follower"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// A dry run takes the decisions the real run would take, by the same code
// where it can: the decider (with its cache lookups), the check of files
// whose size matches (checkEntry reads both sides, as the real run does),
// the judgement of further hard-link names, and the placement of
// duplicates (wouldDedup, dedup.Forecast). Each writing step is left out: fixMeta and
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
		e.fail(rel, err) // the failure names --backup-dir (backupdir.Dir.BeforeReplace)
		return false
	}
	return true
}

// wouldStage is, in a dry run, stageDir's judgement of a new directory
// made in parent (nil: one the run would make too) where it tells without
// writing (destfs.Info.DryStage): a FUSE filesystem's new directories are
// not staged, and Summary.StagingNote says so.
func (sg *stager) wouldStage(parent *handle) {
	e := sg.e
	var pd *fileio.Dir
	if parent != nil {
		pd = parent.d
	}
	made := e.fs.info.DryStage(pd, func(note string) { e.count(func(s *Summary) { s.StagingNote = note }) })
	if made != "" {
		e.count(func(s *Summary) {
			if s.StagingNote == "" {
				s.StagingNote = made
			}
		})
	}
}

// wouldLink judges a further name of a source inode as linkOne does,
// writing nothing (follower.Config.Would): skipped when its name already
// leads to the first name's inode, which is unchanged; linked otherwise.
func (dp *deduper) wouldLink(f linkFollower) error {
	e := dp.e
	cfg := follower.Config{}
	if e.dstRoot != nil && e.backups.on() {
		cfg = follower.Config{OpenDir: e.dstRoot.OpenBeneath, BeforeReplace: e.backups.beforeReplace}
	}
	linked, err := cfg.Would(f.name(), e.dstRoot)
	if err != nil {
		return err
	}
	if !linked {
		e.decide.skip(f.rel, f.st.Size, false, f.group.sum)
		e.mover.Note(f.mv, verify.Sum{})
		return nil
	}
	e.count(func(s *Summary) { s.Linked++ })
	e.stats.FilesDone.Add(1)
	e.stats.BytesDone.Add(f.st.Size)
	e.event(ActLink, f.rel)
	e.mover.Note(f.mv, verify.Sum{})
	return nil
}

// wouldClone says whether the real run would clone a regular file of
// stat st (mayClone): not empty, clones allowed, on DEST's filesystem,
// one of a type that clones (the dry run cannot try one:
// destfs.Info.DryClonesFrom).
func (dp *deduper) wouldClone(st *fileio.Stat) bool {
	e := dp.e
	if st.Size == 0 || e.opt.Reflink == ReflinkNever {
		return false
	}
	return e.fs.info.DryClonesFrom(st.Dev)
}

// dryDedupDest is what DEST can do for a duplicate in a dry run, which
// tries no clone: its filesystem's type tells whether it clones.
func (dp *deduper) dryDedupDest() dedup.Dest {
	return dp.destWith(!dp.e.fs.info.DryClones())
}

// wouldDedup reports whether the real run would place en by sharing the
// data of a file it writes before, or one DEST holds (and how: a clone or a
// hard link), or otherwise notes en as such a file (dedup.Forecast). It
// hashes what the real run hashes: files whose size another file of the
// run, or of DEST, has.
func (dp *deduper) wouldDedup(c *chunk, en *entry, buf []byte) (act Action, ok bool) {
	e := dp.e
	if e.opt.Dedup == dedup.Off || en.st.Size == 0 || !en.st.IsRegular() {
		return "", false
	}
	src, t := c.src, *en
	f := &dedup.Planned{Size: en.st.Size, Meta: dp.dedupMeta(&en.st),
		Hash: func(kept bool) (verify.Sum, error) {
			s, err := dp.hashSource(src.d, &t, buf)
			if err == nil && kept {
				e.stats.BytesRead.Add(-t.st.Size) // read by its copy (wouldRead)
			}
			return s, err
		},
		Keep: func() { src.retain() }, Release: src.release}
	way, hashed := dp.dry.Place(f, dp.dryDedupDest(), dp.confirmDest(en, buf))
	// The hash is the read wouldRead counts for en, unless the copy reads
	// en again: a clone hashes as it clones, and a file larger than buf (or
	// sparse) is not written from the buffer read here (readSource's
	// whole), while a shared one is placed from it.
	if hashed {
		again := en.st.Sparse() || en.st.Size > int64(len(buf)) || dp.wouldClone(&en.st)
		if way != dedup.Copied || !again {
			e.stats.BytesRead.Add(-en.st.Size)
		}
	}
	switch way {
	case dedup.Cloned:
		return ActDedupClone, true
	case dedup.Linked:
		return ActDedupLink, true
	}
	return "", false
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

// confirmDest is, for a dry run's duplicate en, the proof the real run
// asks of a file DEST held before the run (dedup.Proof.ConfirmDest): the
// target is read again with the decider's read of DEST.
func (dp *deduper) confirmDest(en *entry, buf []byte) dedup.Confirm {
	e := dp.e
	pf := dedup.Proof{}
	if e.dstRoot != nil {
		pf.OpenDir = e.dstRoot.OpenBeneath
	}
	return pf.ConfirmDest(en.dstSt, func(td *fileio.Dir, name string) (verify.Sum, error) {
		got, _, err := e.decide.hashDest(td, name, buf, false)
		return got, err
	})
}

// wouldLoseSymlink reports, in a dry run, a symlink the destination's
// filesystem cannot hold (FAT, exFAT: the type tells), as the real run
// reports it once its symlink call fails: not kept, and said once per run.
func (dc *decider) wouldLoseSymlink(en *entry, rel string) bool {
	e := dc.e
	if !en.st.IsSymlink() || !e.fs.info.SymlinksLostByType() {
		return false
	}
	e.fs.info.CannotKeep(lostSymlinks, fmt.Errorf("%w: the filesystem has no symlinks", fileio.ErrUnsupported))
	e.report(&outcome.Outcome{Kind: outcome.Placed, Action: ActNotKept, Path: rel})
	return true
}
