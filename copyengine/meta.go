package copyengine

import (
	"github.com/fastcopy/fastcopy/hashcache"
	"sort"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/meta"
)

// metaConfig is this run's input to the metadata of its copies: who
// copies, and the record of what the destination cannot keep.
func (e *engine) metaConfig() meta.Config {
	return meta.Config{Root: e.root, Euid: e.euid, Groups: e.groups, Umask: e.umask, UmaskKnown: e.umaskKnown,
		CannotKeep: e.fs.metaNotKept, ModeKept: e.fs.modeKept, ModesLost: e.fs.modesLost}
}

// metaNotKept is cannotKeep for the kinds package meta names.
func (fsi *fsInfo) metaNotKept(kind meta.Kind, err error) bool {
	return fsi.cannotKeep(metaKinds[kind], err)
}

// metaKinds names package meta's kinds as the not-kept notes do.
var metaKinds = map[meta.Kind]string{meta.Owners: lostOwners, meta.Modes: lostModes, meta.Xattrs: lostXattrs}

// owner is meta.Config.Owner for this run.
func (e *engine) owner(st *fileio.Stat) (uid, gid int, kept bool) {
	c := e.metaConfig()
	return c.Owner(st)
}

// mode is meta.Mode.
func mode(st *fileio.Stat, ownerKept bool) uint32 { return meta.Mode(st, ownerKept) }

// born is meta.Born: what a new file's creation made right.
type born = meta.Born

// applyMeta is meta.Config.Apply for this run.
func (e *engine) applyMeta(f, srcF *fileio.File, st *fileio.Stat, b born, made *fileio.Stat) error {
	c := e.metaConfig()
	return c.Apply(f, srcF, st, b, made)
}

// metaWanted returns the owner and mode an unchanged destination entry
// should have, and whether they differ from what it has (meta.Config.Wanted).
func (dc *decider) metaWanted(en *entry) (uid, gid int, wantMode uint32, needOwner, differs bool) {
	e := dc.e
	c := e.metaConfig()
	w := c.Wanted(en.dstSt, &en.st)
	return w.Uid, w.Gid, w.Mode, w.NeedOwner, w.Differs
}

// fixMeta brings the mode and owner of an unchanged destination file up to
// date without touching its data, through a descriptor of the inode the
// walk found (meta.Config.FixIn).
func (dc *decider) fixMeta(dst *handle, en *entry) {
	e := dc.e
	if en.st.IsSymlink() {
		return
	}
	if e.skipWrite() {
		dc.wouldFixMeta(en)
		return
	}
	c := e.metaConfig()
	fixed, err := c.FixIn(dst.d, en.dstName, en.dstSt, &en.st)
	if err != nil {
		e.fail(joinRel(dst.rel, en.dstName), err)
		return
	}
	if fixed {
		en.fixed = true // reported with the skip
	}
}

// addDir takes a directory the walk made or went through, to be given
// its source's metadata last (applyDirMeta).
func (c *committer) addDir(dm dirMeta) {
	c.mu.Lock()
	c.dirs = append(c.dirs, dm)
	c.mu.Unlock()
}

// walkedDirs returns the directories the walk made or went through so far.
func (c *committer) walkedDirs() []dirMeta {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]dirMeta(nil), c.dirs...)
}

// applyDirMeta gives each destination directory its source's owner, mode,
// extended attributes and times, deepest first: after its contents are
// written, so read-only directories copy and their times stay as the
// source's. A cancelled run does it too, for every directory listed so far:
// it is quick, and what a directory lacks the next run adds (moving its
// mtime, so that it is set again).
func (c *committer) applyDirMeta() {
	e := c.e
	if e.dstRoot == nil {
		return
	}
	sort.Slice(c.dirs, func(i, j int) bool {
		di, dj := strings.Count(c.dirs[i].dstRel, "/"), strings.Count(c.dirs[j].dstRel, "/")
		if c.dirs[i].dstRel == "" {
			di = -1
		}
		if c.dirs[j].dstRel == "" {
			dj = -1
		}
		return di > dj
	})
	for _, dm := range c.dirs {
		if err := c.applyOneDir(dm); err != nil {
			e.fail(dm.dstRel, err)
		}
	}
}

func (c *committer) applyOneDir(dm dirMeta) error {
	e := c.e
	if e.staged.stillStaged(dm.dstRel) {
		return nil // left for the next run to remove, which a read-only mode would hinder
	}
	if c.dirUpToDate(dm) {
		return nil
	}
	dd, err := e.staged.openDst(dm.dstRel)
	if err != nil {
		return err
	}
	defer dd.Close()
	var srcF *fileio.File
	// Opened like the walk opened it: below the root, so that a path
	// longer than PATH_MAX still gets its attributes.
	if sd, err := e.walker.src.OpenDir(dm.srcRoot, dm.srcRel); err == nil {
		defer sd.Close()
		srcF = sd.AsFile()
	}
	f := dd.AsFile()
	if err := e.applyMeta(f, srcF, &dm.st, born{}, nil); err != nil {
		return err
	}
	return f.SetTimes(dm.st.Atime, dm.st.Mtime)
}

// dirUpToDate reports whether the destination directory of dm already has
// its source's mode, owner and mtime, as after a rerun that changed nothing
// in it (a write in it would have moved its mtime): then nothing is
// applied, which spares a rerun five calls and three opens per directory.
// As for an unchanged file, its extended attributes are not compared and
// its access time is left as it is (listing it to compare moves it). Where
// the filesystem keeps no permission bits, modes are not compared.
func (c *committer) dirUpToDate(dm dirMeta) bool {
	e := c.e
	if dm.created {
		return false // its mtime is the creation's, which a coarse resolution may not tell apart
	}
	rel := dm.dstRel
	if rel == "" {
		rel = "."
	}
	cur, err := e.dstRoot.Lstat(rel)
	s := &dm.st
	return err == nil && cur.IsDir() && (cur.Mode == s.Mode || e.fs.modesLost(cur.Dev)) && cur.Uid == s.Uid && cur.Gid == s.Gid &&
		hashcache.SameTime(cur.Mtime, s.Mtime, e.fs.knownResolution(cur.Dev))
}
