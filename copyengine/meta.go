package copyengine

import (
	"sort"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/meta"
)

// metaConfig is this run's input to the metadata of its copies: who
// copies, and the record of what the destination cannot keep.
func (e *engine) metaConfig() meta.Config {
	return meta.Config{Root: e.root, Euid: e.euid, Groups: e.groups, Umask: e.umask, UmaskKnown: e.umaskKnown,
		CannotKeep: e.fs.metaNotKept, ModeKept: e.fs.info.ModeKept, ModesLost: e.fs.info.ModesLost}
}

// metaNotKept is cannotKeep for the kinds package meta names.
func (fsi *fsInfo) metaNotKept(kind meta.Kind, err error) bool {
	return fsi.info.CannotKeep(metaKinds[kind], err)
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

// applyDirMeta gives each destination directory the walk listed its
// source's metadata, deepest first (meta.Config.ApplyDirs), opening them
// through the stager and the walker.
func (c *committer) applyDirMeta() {
	e := c.e
	if e.dstRoot == nil {
		return
	}
	sort.Slice(c.dirs, func(i, j int) bool { return meta.Deeper(c.dirs[i].dstRel, c.dirs[j].dstRel) })
	dirs := make([]meta.Dir, len(c.dirs))
	for i, dm := range c.dirs {
		dirs[i] = meta.Dir{SrcRoot: dm.srcRoot, SrcRel: dm.srcRel, DstRel: dm.dstRel, St: dm.st, Created: dm.created}
	}
	mc := e.metaConfig()
	mc.ApplyDirs(dirs, dirAccess{e}, e.fail)
}

// dirAccess is how the directory metadata pass opens what it sets
// (meta.DirAccess).
type dirAccess struct{ e *engine }

func (a dirAccess) Staged(rel string) bool                  { return a.e.staged.dirs.Staged(rel) }
func (a dirAccess) OpenDst(rel string) (*fileio.Dir, error) { return a.e.staged.dirs.OpenDir(rel) }
func (a dirAccess) Lstat(rel string) (fileio.Stat, error)   { return a.e.dstRoot.Lstat(rel) }
func (a dirAccess) Resolution(dev uint64) int64             { return a.e.fs.info.KnownResolution(dev) }
func (a dirAccess) OpenSrc(root, rel string) (*fileio.Dir, error) {
	return a.e.walker.src.OpenDir(root, rel)
}
