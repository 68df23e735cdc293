package copyengine

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
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
	// left counts the sources left in place because -u or
	// --ignore-existing kept their DEST file: not moved.
	left int64
	// metaKept counts, per kind of metadata (lostXattrs, lostACLs), the
	// sources kept because the destination could not keep theirs.
	metaKept map[string]int64
	// dryDirs are the source directories a dry run went through.
	dryDirs []dirMeta
	// ctimes holds the change time of each source inode one of whose
	// names finish removed, as it was after (-1: not known).
	ctimes map[devIno]int64
	// removed are the directories removed from, flushed before success
	// (flush.go flushSources).
	removed srcRemovals
}

// keptInPlace notes a source left in place because its DEST file was kept
// (-u, --ignore-existing): it is not moved, and the run says so.
func (mv *mover) keptInPlace() {
	if mv.e.opt.Move {
		mv.mu.Lock()
		mv.left++
		mv.mu.Unlock()
	}
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
	sum    verify.Sum // the digest its copy was verified with; zero when unknown
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

// add notes that the source entry en of src has its copy at rel, whose
// content has the digest sum (zero when unknown).
func (mv *mover) add(src *handle, en *entry, rel string, sum verify.Sum) {
	if mv.e.opt.Move {
		it := mv.item(src, en, rel)
		it.sum = sum
		mv.addItem(it)
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
//
// A dry run makes the same checks and removes nothing: it counts and
// reports (ActWouldRemoveSource) what the real run would remove, the
// directories that would be left empty too.
func (mv *mover) finish() {
	e := mv.e
	if !e.opt.Move {
		return
	}
	var gone map[devIno]map[string]bool // dry run: the names that would go, per directory
	if e.opt.DryRun {
		gone = map[devIno]map[string]bool{}
	}
	mv.dirID = nil // the descriptors are closed by now; only paths and identities are used
	defer mv.report()
	mv.metaKept = map[string]int64{}
	sort.Slice(mv.items, func(i, j int) bool { return mv.items[i].srcDir < mv.items[j].srcDir })
	var d *fileio.Dir
	var dPath string
	var dErr error
	var pol hashcache.Policy // of the source directory d's filesystem
	defer func() {
		if d != nil {
			mv.leave(d)
		}
	}()
	// The destination root the run opened, locked and checked, not its
	// path again: a name swapped above DEST since cannot redirect the look.
	dst := &moveDest{root: e.dstRootPath, rootDir: e.dstRoot, borrowed: e.dstRoot != nil}
	defer dst.close()
	for _, it := range mv.items {
		if e.ctx.Err() != nil {
			return
		}
		if it.srcDir != dPath || d == nil && dErr == nil {
			if d != nil {
				mv.leave(d)
				d = nil
			}
			dPath = it.srcDir
			d, dErr = e.opt.openRoot(it.srcDir)
			pol = hashcache.Policy{CheckInode: true, CheckCtime: true}
			if t, err := fileio.FSType(it.srcDir); err == nil {
				pol = hashcache.PolicyFor(t)
			}
			if dErr == nil {
				// Where inode numbers do not last (see sameAsCopied), the
				// directory is known by its filesystem only: each of its
				// files is then proven by its content.
				if st, err := d.Stat(); err != nil || st.Dev != it.dirID.dev || (pol.CheckInode && st.Ino != it.dirID.ino) {
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
		if err := mv.sameAsCopied(d, dst, it, &cur, &pol); err != nil {
			e.fail(it.rel, err)
			continue
		}
		if gone != nil {
			if gone[it.dirID] == nil {
				gone[it.dirID] = map[string]bool{}
			}
			gone[it.dirID][it.name] = true
			e.count(func(s *Summary) { s.SourcesRemoved++ })
			e.event(ActWouldRemoveSource, it.rel)
			continue
		}
		if kind := mv.fileMetaLost(d, dst, it, &cur); kind != "" {
			mv.metaKept[kind]++
			continue
		}
		if err := mv.remove(d, it.name, &cur); err != nil {
			e.fail(it.rel, fmt.Errorf("--move: cannot remove the source: %w", err))
			continue
		}
		mv.removedIn(d)
		e.count(func(s *Summary) { s.SourcesRemoved++ })
		e.event(ActRemoveSource, it.rel)
	}
	if gone != nil {
		mv.wouldRemoveDirs(gone)
		return
	}
	if d != nil {
		mv.leave(d) // flushed (on FUSE) before it may be removed, left empty
		d = nil
	}
	mv.removeDirs()
}

// noteDryDir notes, in a dry run, a source directory the walk went
// through (the real run has them from committer.walkedDirs).
func (mv *mover) noteDryDir(dm dirMeta) {
	if mv.e.opt.Move {
		mv.mu.Lock()
		mv.dryDirs = append(mv.dryDirs, dm)
		mv.mu.Unlock()
	}
}

// wouldRemoveDirs counts and reports, in a dry run, the source directories
// the real run would remove: deepest first, those that hold nothing but
// entries that would go (gone, by directory identity) and directories that
// would go, in or below which nothing failed; never a source root.
func (mv *mover) wouldRemoveDirs(gone map[devIno]map[string]bool) {
	e := mv.e
	empty := map[devIno]bool{}
	mv.eachSourceDir(mv.dryDirs, func(dm dirMeta, root *fileio.Dir) {
		d, err := root.OpenBeneath(dm.srcRel)
		if err != nil {
			return
		}
		if mv.wouldEmpty(d, gone, empty) {
			e.count(func(s *Summary) { s.SourceDirsGone++ })
			e.event(ActWouldRemoveSource, dm.dstRel+"/")
		}
		d.Close()
	})
}

// wouldEmpty reports whether the removals of a dry run would leave the
// source directory d empty, and notes it in empty when they would.
func (mv *mover) wouldEmpty(d *fileio.Dir, gone map[devIno]map[string]bool, empty map[devIno]bool) bool {
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
func (mv *mover) removeDirs() {
	e := mv.e
	dirs := e.commit.walkedDirs()
	mv.eachSourceDir(dirs, func(dm dirMeta, root *fileio.Dir) {
		if mv.dirMetaLost(root, dm) {
			return
		}
		parent, err := root.OpenBeneath(parentRel(dm.srcRel))
		if err != nil {
			return
		}
		if err := parent.RemoveDir(path.Base(dm.srcRel)); err == nil {
			mv.removedIn(parent)
			e.count(func(s *Summary) { s.SourceDirsGone++ })
			e.event(ActRemoveSource, dm.dstRel+"/")
		}
		mv.leave(parent)
	})
}

// dirMetaLost reports whether the source directory dm, now empty, holds
// metadata its copy in DEST lacks (metaLost): it is then kept and counted
// as a source kept, since removing it would lose that metadata. One that
// is not empty is not looked at: removeDirs leaves it anyway.
func (mv *mover) dirMetaLost(root *fileio.Dir, dm dirMeta) bool {
	e := mv.e
	sd, err := root.OpenBeneath(dm.srcRel)
	if err != nil {
		return false // removeDirs cannot open it either
	}
	defer sd.Close()
	if names, err := sd.ReadDir(); err != nil || len(names) > 0 {
		return false
	}
	kind := mv.metaLost(sd.AsFile(), func() (*fileio.File, error) {
		if e.dstRoot == nil {
			return nil, fmt.Errorf("no destination open")
		}
		dd, err := e.dstRoot.OpenBeneath(dm.dstRel)
		if err != nil {
			return nil, err
		}
		return dd.AsFile(), nil // closed as a File: the descriptor is the directory's
	})
	if kind == "" {
		return false
	}
	mv.mu.Lock()
	mv.metaKept[kind]++
	mv.mu.Unlock()
	return true
}

// eachSourceDir sorts the source directories dirs deepest first and calls
// fn with each, and its source root opened, but for the source roots
// themselves and the directories in or below which something failed,
// until the run is stopped.
func (mv *mover) eachSourceDir(dirs []dirMeta, fn func(dm dirMeta, root *fileio.Dir)) {
	e := mv.e
	e.mu.Lock()
	var failed []string
	for _, f := range e.sum.Failures {
		failed = append(failed, f.Path)
	}
	e.mu.Unlock()
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i].srcRel, "/") > strings.Count(dirs[j].srcRel, "/") })
	for _, dm := range dirs {
		if dm.srcRel == "" || e.ctx.Err() != nil || failedUnder(failed, dm.dstRel) {
			continue
		}
		root, err := e.opt.openRoot(dm.srcRoot)
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

// sameDirAsSource returns an error when the destination directory dd is
// the source directory sd itself (the same (st_dev, st_ino): the source
// bind-mounted inside DEST): what it holds would be found "unchanged" by
// being the source, and --move would remove the only copy. Such a
// directory is not copied into, in any run.
func sameDirAsSource(sd, dd *fileio.Dir) error {
	sst, err := sd.Stat()
	if err != nil {
		return nil
	}
	dst, err := dd.Stat()
	if err != nil || dst.Ino == 0 || dst.Dev != sst.Dev || dst.Ino != sst.Ino {
		return nil
	}
	return fmt.Errorf("the destination directory is the source directory %q itself (mounted inside the destination?); nothing in it copied or moved (unmount it, or copy into another directory)", sd.Path())
}

// fileMetaLost returns the kind of metadata (lostXattrs, lostACLs) the
// regular source file it (cur, in d) holds and its copy in DEST lacks, or
// "": such a source is kept, since removing it would lose that metadata
// for good. The copy is read, not this run's record of refusals: a rerun
// that finds the copy unchanged sets no attribute and meets no refusal,
// and an attribute one entry's copy could not take (too large for it)
// says nothing of another's.
func (mv *mover) fileMetaLost(d *fileio.Dir, dst *moveDest, it moveItem, cur *fileio.Stat) string {
	if !cur.IsRegular() {
		return ""
	}
	f, err := d.Open(it.name, false)
	if err != nil {
		return lostXattrs // cannot tell: keep it
	}
	defer f.Close()
	return mv.metaLost(f, func() (*fileio.File, error) { return dst.open(it.rel) })
}

// metaLost returns the kind of metadata (lostXattrs, lostACLs) the source
// src holds and its copy (opened by openCopy, only when src has any) does
// not hold with the same value, or "". The attributes looked at are those
// a copy takes (all of them as root, else the user namespace and the
// ACLs), but for the SELinux label, which the destination's policy gives
// its files. What cannot be read counts as lost: the source is kept.
func (mv *mover) metaLost(src *fileio.File, openCopy func() (*fileio.File, error)) string {
	attrs, err := fileio.Xattrs(src)
	if err != nil {
		return lostXattrs
	}
	var copied map[string][]byte
	for n, v := range attrs {
		kind := lostXattrs
		if strings.HasPrefix(n, "system.posix_acl_") {
			kind = lostACLs
		}
		if n == "security.selinux" || (!mv.e.root && kind == lostXattrs && !strings.HasPrefix(n, "user.")) {
			continue
		}
		if copied == nil {
			cp, err := openCopy()
			if err != nil {
				return lostXattrs
			}
			copied, err = fileio.Xattrs(cp)
			cp.Close()
			if err != nil {
				return lostXattrs
			}
			if copied == nil {
				copied = map[string][]byte{} // a filesystem without attributes
			}
		}
		if w, ok := copied[n]; !ok || !bytes.Equal(v, w) {
			return kind
		}
	}
	return ""
}

// ErrMoveIncomplete is returned by Run (wrapped in a *MoveIncompleteError)
// when --move kept sources because the destination could not keep their
// extended attributes or ACLs: every copy is in place, but the move is
// not done. It counts as ErrSomeFailed (exit 3).
var ErrMoveIncomplete = errors.New("--move incomplete")

// MoveIncompleteError says how many sources --move kept because the
// destination could not keep their extended attributes or ACLs.
type MoveIncompleteError struct{ Kept int64 }

func (e *MoveIncompleteError) Error() string {
	return fmt.Sprintf("--move incomplete: %d sources kept in place, because the destination could not keep their extended attributes or ACLs (see the warnings); move them to a filesystem that keeps them, or remove the attributes and rerun", e.Kept)
}

// Is makes a move left incomplete an ErrMoveIncomplete and an
// ErrSomeFailed.
func (e *MoveIncompleteError) Is(target error) bool {
	return target == ErrMoveIncomplete || target == ErrSomeFailed
}

// incomplete returns the error of a move that kept sources for their
// metadata, or nil.
func (mv *mover) incomplete() error {
	var n int64
	for _, c := range mv.metaKept {
		n += c
	}
	if n == 0 {
		return nil
	}
	return &MoveIncompleteError{Kept: n}
}

// report puts in the summary the sources not moved: once per reason.
func (mv *mover) report() {
	e := mv.e
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, kind := range []string{lostXattrs, lostACLs} {
		if n := mv.metaKept[kind]; n > 0 {
			e.sum.SourcesKept += n
			e.sum.MoveKept = append(e.sum.MoveKept, fmt.Sprintf("%d sources kept in place: %s cannot keep their %s, which removing them would lose", n, e.fs.fsName(), kind))
		}
	}
	if mv.left > 0 {
		e.sum.SourcesKept += mv.left
		e.sum.MoveKept = append(e.sum.MoveKept, fmt.Sprintf("%d sources kept in place, not moved: their files in DEST were left as they are (-u: newer there, or --ignore-existing)", mv.left))
	}
}

// remove unlinks the source name of d, which cur is. Unlinking one name
// of an inode with several changes its change time: the one it has after
// is kept in mv.ctimes (-1 when it cannot be had), for the checks of its
// other names.
func (mv *mover) remove(d *fileio.Dir, name string, cur *fileio.Stat) error {
	if cur.Nlink < 2 || !cur.IsRegular() {
		return d.Remove(name)
	}
	k := devIno{cur.Dev, cur.Ino}
	if mv.ctimes == nil {
		mv.ctimes = map[devIno]int64{}
	}
	mv.ctimes[k] = -1
	f, err := d.Open(name, false)
	if err != nil {
		return d.Remove(name)
	}
	defer f.Close()
	st, err := f.Stat()
	same := err == nil && st.Dev == cur.Dev && st.Ino == cur.Ino
	if err := d.Remove(name); err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && same {
		mv.ctimes[k] = st.Ctime
	}
	return nil
}

// errSourceChanged is the cause of a source kept because it no longer
// holds what was copied.
var errSourceChanged = errors.New("changed since it was copied; kept (rerun to copy and move it)")

// sameAsCopied returns nil when the source entry cur (just lstat'ed in d)
// may be removed: it is the inode, type, size and mtime its copy was made
// from, with the same change time where its filesystem keeps one (pol),
// or, where it keeps none (FAT, exFAT, NTFS, FUSE), a regular file that
// reads back to the digest its copy was verified with; and its copy in
// DEST is not that very inode (a source directory bind-mounted inside
// DEST is its own "copy").
//
// Where the filesystem keeps no inode number that lasts (pol.CheckInode
// is false: exfat-fuse and fusefat number an inode afresh each time the
// kernel has forgotten it, which memory pressure does at any time), the
// number is no identity: a source file is then what was copied when it
// is of the same filesystem, type, size and mtime and reads back to its
// copy's digest, whatever number it has now; any other entry (a symlink)
// must still have the number it had, or it is kept.
func (mv *mover) sameAsCopied(d *fileio.Dir, dst *moveDest, it moveItem, cur *fileio.Stat, pol *hashcache.Policy) error {
	ctime, checkCtime := it.st.Ctime, pol.CheckCtime
	if c, ok := mv.ctimes[devIno{cur.Dev, cur.Ino}]; ok {
		// This run removed another name of the inode, which moved its
		// change time: compare with the one it had after that.
		ctime, checkCtime = c, checkCtime && c >= 0
	}
	byContent := !pol.CheckCtime || !pol.CheckInode // read again: its stat cannot tell
	checkIno := pol.CheckInode || !cur.IsRegular()
	if cur.Dev != it.st.Dev || (checkIno && cur.Ino != it.st.Ino) || cur.Type() != it.st.Type() || cur.Size != it.st.Size || cur.Mtime != it.st.Mtime ||
		(checkCtime && cur.Ctime != ctime) {
		return fmt.Errorf("--move: the source %q %w", it.name, errSourceChanged)
	}
	if mv.e.opt.DryRun {
		return nil // no copy was made to check
	}
	cp, err := dst.lstat(it.rel)
	if err != nil {
		return fmt.Errorf("--move: source kept: its copy cannot be checked: %w", err)
	}
	if cp.Dev == cur.Dev && cp.Ino == cur.Ino {
		return fmt.Errorf("--move: source kept: its copy in the destination is the source itself (the same inode: the source mounted inside the destination?)")
	}
	if !byContent || !cur.IsRegular() {
		return nil
	}
	// No change time to tell a rewrite whose mtime was put back, or no
	// inode number to tell another file: read it again.
	if it.sum == (verify.Sum{}) {
		return fmt.Errorf("--move: source kept: its filesystem keeps no change time or no lasting inode number, and no digest of its copy is known to check it against; rerun")
	}
	f, err := d.Open(it.name, false)
	if err != nil {
		return fmt.Errorf("--move: source kept: reading it again: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || (pol.CheckInode && st.Ino != cur.Ino) || st.Dev != cur.Dev || st.Size != cur.Size || st.Mtime != cur.Mtime {
		return fmt.Errorf("--move: the source %q %w", it.name, errSourceChanged)
	}
	got, n, err := verify.HashFile(f, cur.Size, false, make([]byte, 1<<20))
	if err != nil {
		return fmt.Errorf("--move: source kept: reading it again: %w", err)
	}
	mv.e.count(func(s *Summary) { s.BytesHashed += n })
	if n != cur.Size || got != it.sum {
		return fmt.Errorf("--move: the source %q %w (its content differs from the copy's)", it.name, errSourceChanged)
	}
	return nil
}

// moveDest looks up the copies of the sources in DEST: each directory is
// opened beneath DEST's root without following symlinks (the last one is
// kept open, the sources being removed in order of their directories).
type moveDest struct {
	root     string
	rootDir  *fileio.Dir
	borrowed bool // rootDir is the run's own destination root: not closed here
	dir      *fileio.Dir
	dirRel   string
}

// open opens the destination file rel, the one lstat finds there.
func (md *moveDest) open(rel string) (*fileio.File, error) {
	want, err := md.lstat(rel)
	if err != nil {
		return nil, err
	}
	f, err := md.dir.Open(path.Base(rel), false)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || st.Dev != want.Dev || st.Ino != want.Ino {
		f.Close()
		return nil, fmt.Errorf("%q was replaced as it was opened", rel)
	}
	return f, nil
}

// lstat returns the stat of the destination entry rel.
func (md *moveDest) lstat(rel string) (fileio.Stat, error) {
	if md.rootDir == nil {
		r, err := fileio.OpenDir(md.root)
		if err != nil {
			return fileio.Stat{}, err
		}
		md.rootDir = r
	}
	parent, name := parentRel(rel), path.Base(rel)
	if md.dir == nil || md.dirRel != parent {
		if md.dir != nil && md.dir != md.rootDir {
			md.dir.Close()
		}
		md.dir = nil
		if parent == "" {
			md.dir = md.rootDir
		} else {
			sub, err := md.rootDir.OpenBeneath(parent)
			if err != nil {
				return fileio.Stat{}, err
			}
			md.dir = sub
		}
		md.dirRel = parent
	}
	return md.dir.Lstat(name)
}

func (md *moveDest) close() {
	if md.dir != nil && md.dir != md.rootDir {
		md.dir.Close()
	}
	if md.rootDir != nil && !md.borrowed {
		md.rootDir.Close()
	}
}
