package move

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// finisher is one pass of Finish over the noted sources, in order of
// their directories: the directory open now, and DEST's copies.
type finisher struct {
	j     *Journal
	dst   *destLook
	gone  map[devIno]map[string]bool // dry run: the names that would go, per directory
	d     *fileio.Dir                // the source directory of the items met now
	dPath string
	dErr  error            // why d could not be opened, or is not the directory read
	pol   hashcache.Policy // of d's filesystem
}

// Finish removes the noted sources. It runs only after the final flush
// of a run that was not stopped. A source is removed only on the proof
// proven asks for; one changed since is kept and fails, named. Then the
// source directories left empty go, deepest first.
//
// A dry run makes the same checks and removes nothing: it reports
// (Config.Removed) what the real run would remove, the directories that
// would be left empty too.
//
// The Result counts the sources kept in place, which the run reports.
func (j *Journal) Finish() Result {
	if j == nil {
		return Result{}
	}
	f := &finisher{j: j}
	if j.cfg.dry() {
		f.gone = map[devIno]map[string]bool{}
	}
	j.dirID = nil // the descriptors are closed by now; only paths and identities are used
	j.metaKept = map[string]int64{}
	sort.Slice(j.items, func(a, b int) bool { return j.items[a].srcDir < j.items[b].srcDir })
	// The destination root the run opened, locked and checked, not its
	// path again: a name swapped above DEST since cannot redirect the look.
	root, rootDir := j.cfg.Dest()
	f.dst = &destLook{root: root, rootDir: rootDir, borrowed: rootDir != nil}
	defer f.close()
	for _, it := range j.items {
		if j.cfg.Stopped() {
			return j.result()
		}
		f.removeItem(it)
	}
	if f.gone != nil {
		j.wouldRemoveDirs(f.gone)
		return j.result()
	}
	f.leaveDir() // flushed (on FUSE) before it may be removed, left empty
	j.removeDirs()
	return j.result()
}

// removeItem removes the source it, once proven to be what was copied,
// or (dry run) notes that it would go.
func (f *finisher) removeItem(it Item) {
	j := f.j
	if it.srcDir != f.dPath || f.d == nil && f.dErr == nil {
		f.openDir(it)
	}
	if f.dErr != nil {
		j.cfg.Failed(it.rel, fmt.Errorf("--move: source kept: %w", f.dErr))
		return
	}
	cur, err := f.d.Lstat(it.name)
	if err != nil {
		if !fileio.IsNotExist(err) {
			j.cfg.Failed(it.rel, fmt.Errorf("--move: source kept: %w", err))
		}
		return
	}
	if err := j.proven(f.d, f.dst, it, &cur, &f.pol); err != nil {
		j.cfg.Failed(it.rel, err)
		return
	}
	if f.gone != nil {
		if f.gone[it.dirID] == nil {
			f.gone[it.dirID] = map[string]bool{}
		}
		f.gone[it.dirID][it.name] = true
		j.cfg.Removed(it.rel, false)
		return
	}
	if kind := j.fileMetaLost(f.d, f.dst, it, &cur); kind != "" {
		j.metaKept[kind]++
		return
	}
	if err := j.remove(f.d, it.name, &cur); err != nil {
		j.cfg.Failed(it.rel, fmt.Errorf("--move: cannot remove the source: %w", err))
		return
	}
	j.removedIn(f.d)
	j.cfg.Removed(it.rel, false)
}

// openDir opens the source directory of it, in place of the one open,
// and checks it is still the directory read.
func (f *finisher) openDir(it Item) {
	f.leaveDir()
	f.dPath = it.srcDir
	f.d, f.dErr = f.j.cfg.OpenDir(it.srcDir)
	f.pol = hashcache.Policy{CheckInode: true, CheckCtime: true}
	if t, err := fileio.FSType(it.srcDir); err == nil {
		f.pol = hashcache.PolicyFor(t)
	}
	if f.dErr != nil {
		return
	}
	// Where inode numbers do not last (see proven), the directory is
	// known by its filesystem only: each of its files is then proven by
	// its content.
	if st, err := f.d.Stat(); err != nil || st.Dev != it.dirID.dev || (f.pol.CheckInode && st.Ino != it.dirID.ino) {
		f.d.Close()
		f.d, f.dErr = nil, fmt.Errorf("the source directory %q was replaced since it was read", it.srcDir)
	}
}

// leaveDir closes the source directory open, if any (leave).
func (f *finisher) leaveDir() {
	if f.d != nil {
		f.j.leave(f.d)
		f.d = nil
	}
}

func (f *finisher) close() {
	f.dst.close()
	f.leaveDir()
}

// wouldRemoveDirs reports, in a dry run, the source directories the real
// run would remove: deepest first, those that hold nothing but entries
// that would go (gone, by directory identity) and directories that would
// go, in or below which nothing failed; never a source root.
func (j *Journal) wouldRemoveDirs(gone map[devIno]map[string]bool) {
	empty := map[devIno]bool{}
	j.eachSourceDir(j.dryDirs, func(dm Dir, root *fileio.Dir) {
		d, err := root.OpenBeneath(dm.SrcRel)
		if err != nil {
			return
		}
		if wouldEmpty(d, gone, empty) {
			j.cfg.Removed(dm.DstRel, true)
		}
		d.Close()
	})
}

// wouldEmpty reports whether the removals of a dry run would leave the
// source directory d empty, and notes it in empty when they would.
func wouldEmpty(d *fileio.Dir, gone map[devIno]map[string]bool, empty map[devIno]bool) bool {
	st, err := d.Stat()
	if err != nil {
		return false
	}
	id := devIno{st.Dev, st.Ino}
	names, err := d.ReadDir()
	if err != nil {
		return false
	}
	for _, n := range names {
		if gone[id][n.Name] {
			continue
		}
		sub, err := d.Lstat(n.Name)
		if err != nil || !sub.IsDir() || !empty[devIno{sub.Dev, sub.Ino}] {
			return false
		}
	}
	empty[id] = true
	return true
}

// removeDirs removes the source directories the walk went through that are
// left empty, deepest first, never a source root: rmdir removes only an
// empty directory, so one that holds anything (a file kept, one that
// failed, one added meanwhile) stays. A directory in which something
// failed is left too.
func (j *Journal) removeDirs() {
	j.eachSourceDir(j.cfg.Dirs(), func(dm Dir, root *fileio.Dir) {
		if j.dirMetaLost(root, dm) {
			return
		}
		parent, err := root.OpenBeneath(parentRel(dm.SrcRel))
		if err != nil {
			return
		}
		if err := parent.RemoveDir(path.Base(dm.SrcRel)); err == nil {
			j.removedIn(parent)
			j.cfg.Removed(dm.DstRel, true)
		}
		j.leave(parent)
	})
}

// eachSourceDir sorts the source directories dirs deepest first and calls
// fn with each, and its source root opened, but for the source roots
// themselves and the directories in or below which something failed,
// until the run is stopped.
func (j *Journal) eachSourceDir(dirs []Dir, fn func(dm Dir, root *fileio.Dir)) {
	failed := j.cfg.Failures()
	sort.Slice(dirs, func(a, b int) bool { return strings.Count(dirs[a].SrcRel, "/") > strings.Count(dirs[b].SrcRel, "/") })
	for _, dm := range dirs {
		if dm.SrcRel == "" || j.cfg.Stopped() || failedUnder(failed, dm.DstRel) {
			continue
		}
		root, err := j.cfg.OpenDir(dm.SrcRoot)
		if err != nil {
			continue
		}
		fn(dm, root)
		root.Close()
	}
}

// failedUnder reports whether a failure is at dir or below it.
func failedUnder(failed []string, dir string) bool {
	for _, f := range failed {
		if f == dir || strings.HasPrefix(f, dir+"/") {
			return true
		}
	}
	return false
}

// parentRel is the directory holding rel ("" for the root).
func parentRel(rel string) string {
	d := path.Dir(rel)
	if d == "." || d == "/" {
		return ""
	}
	return strings.TrimSuffix(d, "/")
}
