package copyengine

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// mover is the stage of --move: each source entry whose copy reached its
// final name (copied and verified, or found unchanged by digest, or linked
// to its first name's verified copy) is noted; after the run's final flush,
// which makes every one of those copies and renames durable, finish
// removes the noted sources that are still what was read, then the source
// directories left empty. Until then every file exists complete at least
// in the source; from then on at least in DEST.
type mover struct {
	e     *engine
	mu    sync.Mutex
	items []moveItem
	dirID map[*fileio.Dir]devIno
}

// moveItem is a source entry to remove: its directory (by path, and the
// identity that directory had when it was read), its name, and the stat
// its copy was made from.
type moveItem struct {
	srcDir string
	dirID  devIno
	name   string
	rel    string // in the destination, for messages
	st     fileio.Stat
}

// item notes what moveItem a source entry en of the directory src is.
func (mv *mover) item(src *handle, en *entry, rel string) moveItem {
	if !mv.e.opt.Move || src == nil {
		return moveItem{}
	}
	mv.mu.Lock()
	id, ok := mv.dirID[src.d]
	mv.mu.Unlock()
	if !ok {
		st, err := src.d.Stat()
		if err != nil {
			return moveItem{}
		}
		id = devIno{st.Dev, st.Ino}
		mv.mu.Lock()
		if mv.dirID == nil {
			mv.dirID = map[*fileio.Dir]devIno{}
		}
		mv.dirID[src.d] = id
		mv.mu.Unlock()
	}
	return moveItem{srcDir: src.d.Path(), dirID: id, name: en.name, rel: rel, st: en.st}
}

// add notes that the source entry en of src has its copy at rel.
func (mv *mover) add(src *handle, en *entry, rel string) {
	if mv.e.opt.Move {
		mv.addItem(mv.item(src, en, rel))
	}
}

func (mv *mover) addItem(it moveItem) {
	if !mv.e.opt.Move || it.srcDir == "" {
		return
	}
	mv.mu.Lock()
	mv.items = append(mv.items, it)
	mv.mu.Unlock()
}

// finish removes the noted sources. It runs only after the final flush of
// a run that was not stopped. A source is removed only while its name
// still leads to the inode read, of the size and mtime read: one changed
// since is kept and fails, named.
func (mv *mover) finish() {
	e := mv.e
	if !e.opt.Move || e.opt.DryRun {
		return
	}
	mv.dirID = nil // the descriptors are closed by now; only paths and identities are used
	sort.Slice(mv.items, func(i, j int) bool { return mv.items[i].srcDir < mv.items[j].srcDir })
	var d *fileio.Dir
	var dPath string
	var dErr error
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	for _, it := range mv.items {
		if e.ctx.Err() != nil {
			return
		}
		if it.srcDir != dPath || d == nil && dErr == nil {
			if d != nil {
				d.Close()
				d = nil
			}
			dPath = it.srcDir
			d, dErr = fileio.OpenDir(it.srcDir)
			if dErr == nil {
				if st, err := d.Stat(); err != nil || (devIno{st.Dev, st.Ino}) != it.dirID {
					d.Close()
					d, dErr = nil, fmt.Errorf("the source directory %q was replaced since it was read", it.srcDir)
				}
			}
		}
		if dErr != nil {
			e.fail(it.rel, fmt.Errorf("--move: source kept: %w", dErr))
			continue
		}
		cur, err := d.Lstat(it.name)
		if err != nil {
			if !fileio.IsNotExist(err) {
				e.fail(it.rel, fmt.Errorf("--move: source kept: %w", err))
			}
			continue
		}
		if cur.Dev != it.st.Dev || cur.Ino != it.st.Ino || cur.Type() != it.st.Type() || cur.Size != it.st.Size || cur.Mtime != it.st.Mtime {
			e.fail(it.rel, fmt.Errorf("--move: the source %q changed since it was copied; kept (rerun to copy and move it)", it.name))
			continue
		}
		if err := d.Remove(it.name); err != nil {
			e.fail(it.rel, fmt.Errorf("--move: cannot remove the source: %w", err))
			continue
		}
		e.count(func(s *Summary) { s.SourcesRemoved++ })
		e.event(ActRemoveSource, it.rel)
	}
	mv.removeDirs()
}

// removeDirs removes the source directories the walk went through that are
// left empty, deepest first, never a source root: rmdir removes only an
// empty directory, so one that holds anything (a file kept, one that
// failed, one added meanwhile) stays. A directory in which something
// failed is left too.
func (mv *mover) removeDirs() {
	e := mv.e
	e.mu.Lock()
	dirs := append([]dirMeta(nil), e.commit.dirs...)
	var failed []string
	for _, f := range e.sum.Failures {
		failed = append(failed, f.Path)
	}
	e.mu.Unlock()
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i].srcRel, "/") > strings.Count(dirs[j].srcRel, "/") })
	for _, dm := range dirs {
		if dm.srcRel == "" || e.ctx.Err() != nil {
			continue
		}
		if failedUnder(failed, dm.dstRel) {
			continue
		}
		root, err := fileio.OpenDir(dm.srcRoot)
		if err != nil {
			continue
		}
		parent, err := root.OpenBeneath(parentRel(dm.srcRel))
		root.Close()
		if err != nil {
			continue
		}
		if err := parent.RemoveDir(path.Base(dm.srcRel)); err == nil {
			e.count(func(s *Summary) { s.SourceDirsGone++ })
			e.event(ActRemoveSource, dm.dstRel+"/")
		}
		parent.Close()
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
