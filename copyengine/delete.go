package copyengine

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/namefold"
)

// ErrMaxDelete is returned by Run when --delete would remove more entries
// than Options.MaxDelete allows: nothing was deleted (the copy itself is
// done and durable). It is wrapped in a *MaxDeleteError.
var ErrMaxDelete = errors.New("--max-delete: more to delete than allowed")

// MaxDeleteError says how many entries --delete would have removed and the
// bound it exceeded.
type MaxDeleteError struct {
	Planned int64
	Max     int
}

func (e *MaxDeleteError) Error() string {
	if e.Max < 0 {
		return fmt.Sprintf("--delete would remove %d entries and --max-delete allows none: nothing was deleted", e.Planned)
	}
	return fmt.Sprintf("--delete would remove %d entries, more than --max-delete %d: nothing was deleted", e.Planned, e.Max)
}

// Unwrap returns ErrMaxDelete.
func (e *MaxDeleteError) Unwrap() error { return ErrMaxDelete }

// mirror is the stage of --delete: the walk notes each destination
// directory it listed in full (noteDir); once the copy is verified and
// durable (after the final flush), finish removes from those directories
// what their sources lack, through directory descriptors, never following
// a symlink. It also holds the guards checked before anything is written.
type mirror struct {
	e     *engine
	mu    sync.Mutex
	dirs  []mirrorDir
	notes map[string]string // destination directory -> source volume identity, recorded after the run
}

// mirrorDir is a destination directory whose source directory was listed
// in full: what the source has there, by the destination's name key.
type mirrorDir struct {
	dstRel, srcRel string
	srcRoot        string // the source root srcRel is in (the filters' root)
	id             devIno
	has            map[string]bool
	fold           *foldInfo // how the destination folds names, when it does
	// respelled: DEST holds the directory under another spelling than
	// the source's (or it lies below one such): its entries are not known
	// to be this source directory's copies, so the source's lacking them
	// is no proof they may go (fold.go, respelled).
	respelled bool
}

func (d *mirrorDir) key(name string) string {
	if d.fold != nil {
		return namefold.Key(name, d.fold.normalises)
	}
	return name
}

// noteDir records the listed directory l for --delete. Only a directory
// that existed (one this run made has nothing to delete) and whose source
// listing succeeded (walkDir gets here only then) is noted.
func (m *mirror) noteDir(l *dirList) {
	e := m.e
	if !e.opt.Delete || l.dd == nil || l.w.created {
		return
	}
	st, err := l.dd.Stat()
	if err != nil {
		return // not noted: its extras are kept
	}
	d := mirrorDir{dstRel: l.w.dstRel, srcRel: l.w.srcRel, srcRoot: l.w.root.srcDir, id: devIno{st.Dev, st.Ino}, fold: l.fold, has: make(map[string]bool, len(l.dstNames)), respelled: l.w.respelled}
	for i, n := range l.dstNames {
		d.has[d.key(n)] = true
		d.has[d.key(l.names[i].Name)] = true // a name that fails to map keeps what has it
	}
	m.mu.Lock()
	m.dirs = append(m.dirs, d)
	m.mu.Unlock()
}

// sourceNoteKey is the hash-cache note under which the identity of the
// filesystem a mirrored source root was on was kept, per destination
// directory by its path, before destNoteKey. It is read when there is no
// note by identity (the first run after an upgrade), and written only for
// a destination whose volume has no identity.
func sourceNoteKey(dst string) string { return "mirror-source:" + dst }

// destNoteKey is the hash-cache note under which the identity of the
// filesystem a mirrored source root was on is kept, per destination
// directory by its identity: its volume's and its inode number, so that
// the same DEST reached by another path (a bind mount, a disk mounted at
// another place) is known as the same. It is "" for a destination that
// is missing or whose volume has no identity.
func destNoteKey(dst string) string {
	vol, err := fileio.IdentifyVolume(dst)
	if err != nil || vol.ID == "" {
		return ""
	}
	d, err := fileio.OpenDir(dst)
	if err != nil {
		return ""
	}
	st, err := d.Stat()
	d.Close()
	if err != nil || st.Ino == 0 || st.Dev != vol.Dev {
		return ""
	}
	return fmt.Sprintf("mirror-source-of:%s:%d", vol.ID, st.Ino)
}

// lastSource returns the identity of the filesystem last mirrored into
// the destination directory dst, by dst's identity, else by its path.
func (m *mirror) lastSource(dst string) (string, bool) {
	c := m.e.cache
	if k := destNoteKey(dst); k != "" {
		if was, ok := c.Note(k); ok {
			return was, true
		}
	}
	return c.Note(sourceNoteKey(fileio.RealPath(dst)))
}

// guard refuses --delete, before anything is written, where a source root
// looks like a drive that is not there: a source root that is empty, or on
// another filesystem than the last time it was mirrored into this
// destination (known from the hash cache's note; without a cache only the
// first check is made), while the destination directory is not empty.
// DeleteForce lets the run go on. It also checks --backup-dir.
func (m *mirror) guard(p *plan) error {
	e := m.e
	if !e.opt.Delete {
		return e.backups.check(p)
	}
	for i := range p.roots {
		r := &p.roots[i]
		// A source inside DEST (by identity: through a symlink, a bind
		// mount of DEST or of a directory in it, a second mount) is, to
		// DEST, an entry its mirror may lack, and what the filters leave
		// out of it is nowhere else.
		srcPath := r.srcDir
		if !r.isDir {
			srcPath = filepath.Join(r.srcDir, r.name)
		}
		if in, err := overlapInside(srcPath, p.dstRoot); err == nil && in {
			return refuse(r.src, "is inside the destination "+quote(p.dstRoot)+": --delete would remove the source itself", "name a source outside the destination, or leave --delete out")
		}
		if !r.isDir {
			continue
		}
		dst := filepath.Join(p.dstRoot, filepath.FromSlash(r.dstRel))
		dstFull := !p.create && dirHasEntries(dst)
		sd, err := fileio.OpenDir(r.srcDir)
		if err != nil {
			return refuse(r.src, "cannot open source: "+ErrText(err), "check the source is there")
		}
		names, err := sd.ReadDir()
		sd.Close()
		if err != nil {
			return refuse(r.src, "cannot list source: "+ErrText(err), "check the source is readable")
		}
		if len(names) == 0 && dstFull && !e.opt.DeleteForce {
			return refuse(r.src, "is empty, and --delete would remove everything in "+quote(dst),
				"check that the source drive is mounted; if the source really is empty and the destination should be emptied, add --delete-force")
		}
		if e.cache == nil {
			continue
		}
		vol, err := fileio.IdentifyVolume(r.srcDir)
		if err != nil || vol.ID == "" {
			continue // no identity to compare or remember
		}
		if was, ok := m.lastSource(dst); ok && was != vol.ID && dstFull && !e.opt.DeleteForce {
			return refuse(r.src, fmt.Sprintf("is on another filesystem (%s) than when it was last mirrored into %q (%s), and --delete would remove what the destination holds and it lacks", vol.ID, dst, was),
				"check that the right drive is mounted at the source; if it is, add --delete-force once to mirror it and remember this filesystem")
		}
		if m.notes == nil {
			m.notes = map[string]string{}
		}
		m.notes[dst] = vol.ID // its key is found in record: dst may not exist yet
	}
	if err := m.checkLinkDests(p); err != nil {
		return err
	}
	return e.backups.check(p) // last: it makes the backup directory
}

// checkLinkDests refuses a --link-dest that is DEST or lies inside it, by
// identity (a relative one is relative to DEST: "snap1" is DEST/snap1):
// to the mirror it is an entry the source lacks, and --delete would
// remove the earlier copy the run links to.
func (m *mirror) checkLinkDests(p *plan) error {
	for _, arg := range m.e.opt.LinkDest {
		if in, err := overlapInside(linkDestPath(p.dstRoot, arg), p.dstRoot); err == nil && in {
			return refuse(arg, "is inside the destination "+quote(p.dstRoot)+": --delete would remove the earlier copy it links to", "name an earlier copy beside the destination (a relative --link-dest is relative to DEST: ../NAME), or leave --delete out")
		}
	}
	return nil
}

// dirHasEntries reports whether the directory at p exists and holds
// anything but the record of what fastcopy made there (made.go). A name
// like a temporary's counts: it may be the user's.
func dirHasEntries(p string) bool {
	d, err := fileio.OpenDir(p)
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.ReadDir()
	if err != nil {
		return true // cannot tell: treat as holding something
	}
	for _, n := range names {
		if n.Name != madeName {
			return true
		}
	}
	return false
}

// delEntry is one entry --delete removes: a name in a destination
// directory, and for a directory, what is in it.
type delEntry struct {
	name   string
	rel    string // relative to the destination root
	srcRel string // where it would be in the source (for the exclude rules)
	dir    bool
	id     devIno
	kids   []delEntry
	keep   bool // a directory holding something excluded: emptied, kept
}

// delDir is a planned directory: its identity, and its extras.
type delDir struct {
	dstRel string
	id     devIno
	extras []delEntry
}

// finish removes what the sources lack, after the copy is verified and
// durable. It plans first (and stops before deleting anything when the
// plan exceeds MaxDelete); a dry run only lists the plan.
func (m *mirror) finish() error {
	e := m.e
	if !e.opt.Delete || e.dstRoot == nil {
		return nil
	}
	failedIn := map[string]bool{}
	e.mu.Lock()
	for _, f := range e.sum.Failures {
		failedIn[parentRel(f.Path)] = true
		failedIn[f.Path] = true
	}
	e.mu.Unlock()
	sort.Slice(m.dirs, func(i, j int) bool { return m.dirs[i].dstRel < m.dirs[j].dstRel })
	var plan []delDir
	var total int64
	for i := range m.dirs {
		d := &m.dirs[i]
		dd, err := m.plan(d)
		if err != nil {
			m.kept(d.dstRel, ErrText(err))
			continue
		}
		if failedIn[d.dstRel] || d.respelled {
			if len(dd.extras) > 0 {
				what := fmt.Sprintf("%d entries", len(dd.extras))
				if len(dd.extras) == 1 {
					what = "1 entry"
				}
				why := ", as something in it failed"
				if d.respelled {
					why = fmt.Sprintf(", as the source names it %q, another spelling: they may be the only copies of another source directory's entries", d.srcRel)
				}
				m.kept(d.dstRel, what+why)
			}
			continue
		}
		for _, x := range dd.extras {
			total += x.count()
		}
		if len(dd.extras) > 0 {
			plan = append(plan, dd)
		}
	}
	over := e.opt.MaxDelete != 0 && total > int64(max(e.opt.MaxDelete, 0))
	if over {
		for _, dd := range plan {
			for _, x := range dd.extras {
				x.walk(func(x *delEntry) { e.event(ActWouldDelete, x.rel) })
			}
		}
		e.count(func(s *Summary) { s.WouldDelete = total })
		return &MaxDeleteError{Planned: total, Max: e.opt.MaxDelete} // a dry run says so too
	}
	// A dry run carries the plan out too: each removal and each backup
	// asks skipWrite, and counts and reports what it would do.
	for _, dd := range plan {
		if e.ctx.Err() != nil {
			return e.ctx.Err()
		}
		m.remove(dd)
	}
	return nil
}

// kept notes that the extras of dir were kept, and why.
func (m *mirror) kept(dir, why string) {
	name := dir
	if name == "" {
		name = "."
	}
	m.e.count(func(s *Summary) { s.DeleteKept = append(s.DeleteKept, fmt.Sprintf("%q: %s", name, why)) })
}

// plan lists the directory d again, through a descriptor opened beneath
// the destination root without following symlinks and checked to be the
// directory the walk listed, and returns what the source lacks there.
func (m *mirror) plan(d *mirrorDir) (delDir, error) {
	dir, err := m.openChecked(d.dstRel, d.id, "the directory was replaced during the run")
	if err != nil {
		return delDir{}, err
	}
	defer dir.Close()
	names, err := dir.ReadDir()
	if err != nil {
		return delDir{}, fmt.Errorf("listing it again: %w", err)
	}
	out := delDir{dstRel: d.dstRel, id: d.id}
	for _, n := range names {
		if d.has[d.key(n.Name)] || m.own(dir, d.dstRel, n.Name) {
			continue
		}
		x, ok := m.planEntry(dir, d.id.dev, d.srcRoot, n.Name, joinRel(d.dstRel, n.Name), joinRel(d.srcRel, n.Name))
		if ok {
			out.extras = append(out.extras, x)
		}
	}
	return out, nil
}

// own reports whether name in dir (at dstRel) is fastcopy's own, which
// --delete leaves to the walk: a temporary or staged directory that the
// record of what runs made names (made.go), which the walk removes or
// takes up, or that record itself. Anything else named like a temporary
// is an entry the source lacks, like any other.
func (m *mirror) own(dir *fileio.Dir, dstRel, name string) bool {
	if dstRel == "" && name == madeName && !m.e.made.foreign {
		return true
	}
	return isTempName(name) && m.e.made.oursByName(dir, dstRel, name)
}

// planEntry plans the removal of name in dir (on device dev), and of what
// is in it for a directory; ok is false for an entry that is kept
// (excluded, this run's hash cache with its journals and presence file, a
// mount point, gone). A directory holding something kept at any depth is
// emptied of the rest and kept.
func (m *mirror) planEntry(dir *fileio.Dir, dev uint64, srcRoot, name, rel, srcRel string) (delEntry, bool) {
	e := m.e
	st, err := dir.Lstat(name)
	if err != nil {
		return delEntry{}, false
	}
	if e.excluded(srcRoot, nil, srcRel, fileio.DirEntry{Name: name, Type: st.Type()}) {
		return delEntry{}, false // excluded paths are kept (rsync's default)
	}
	if e.opt.MHL && isMHLFolder(rel) {
		return delEntry{}, false // DEST's ASC MHL history, which the run extends (mhl.go)
	}
	if st.Dev != dev || dir.IsMountRoot(name) {
		// Another filesystem, or a bind mount, below DEST: what is
		// there is not DEST's; never entered.
		m.kept(rel, "a mount point; unmount it or remove it yourself")
		return delEntry{}, false
	}
	if st.Ino != 0 && (devIno{st.Dev, st.Ino}) == e.ownFile || st.IsRegular() && e.ownJournal(dir, name) {
		return delEntry{}, false // the hash cache's, left out of the source walk too (walk.go)
	}
	x := delEntry{name: name, rel: rel, srcRel: srcRel, dir: st.IsDir(), id: devIno{st.Dev, st.Ino}}
	if !x.dir {
		return x, true
	}
	sub, err := openSubChecked(dir, name, x.id)
	if err != nil {
		x.keep = true // cannot look inside: not removed
		return x, false
	}
	defer sub.Close()
	names, err := sub.ReadDir()
	if err != nil {
		return x, false
	}
	for _, n := range names {
		k, ok := m.planEntry(sub, x.id.dev, srcRoot, n.Name, rel+"/"+n.Name, srcRel+"/"+n.Name)
		if ok {
			x.kids = append(x.kids, k)
		}
		if !ok || k.keep {
			x.keep = true
		}
	}
	return x, true
}

// count is how many entries removing x removes.
func (x *delEntry) count() int64 {
	var n int64
	if !x.keep {
		n = 1
	}
	for i := range x.kids {
		n += x.kids[i].count()
	}
	return n
}

// walk calls fn for x and everything in it that is removed, deepest first.
func (x *delEntry) walk(fn func(*delEntry)) {
	for i := range x.kids {
		x.kids[i].walk(fn)
	}
	if !x.keep {
		fn(x)
	}
}

// openSubChecked opens the subdirectory name of dir without following a
// symlink and checks it is the directory id (as lstat saw it): a name
// swapped between the two fails.
func openSubChecked(dir *fileio.Dir, name string, id devIno) (*fileio.Dir, error) {
	sub, err := dir.OpenSub(name)
	if err != nil {
		return nil, err
	}
	st, err := sub.Stat()
	if err == nil && (devIno{st.Dev, st.Ino}) != id {
		err = fmt.Errorf("%q was replaced by another directory", name)
	}
	if err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// openChecked opens the destination directory rel beneath the root
// without following symlinks and checks it is the directory id; one that
// is not fails with the error replaced.
func (m *mirror) openChecked(rel string, id devIno, replaced string) (*fileio.Dir, error) {
	dir, err := m.e.staged.openDst(rel)
	if err != nil {
		return nil, err
	}
	st, err := dir.Stat()
	if err == nil && (devIno{st.Dev, st.Ino}) != id {
		err = errors.New(replaced)
	}
	if err != nil {
		dir.Close()
		return nil, err
	}
	return dir, nil
}

// remove carries out the plan of one directory: opened again beneath the
// root and checked to be the directory planned, each extra removed
// relative to it (a directory's contents through its own checked
// descriptor, deepest first). Every unlink and rmdir names an entry in a
// directory descriptor: a symlink is removed as itself, never followed,
// and a directory swapped for a symlink fails to open.
func (m *mirror) remove(d delDir) {
	e := m.e
	dir, err := m.openChecked(d.dstRel, d.id, "the directory was replaced before its extras were removed")
	if err != nil {
		m.kept(d.dstRel, ErrText(err))
		return
	}
	defer dir.Close()
	writableDir(e, dir)
	for i := range d.extras {
		m.removeEntry(dir, &d.extras[i])
	}
}

// writableDir lets the owner remove entries of a directory left read-only
// (as its source is): its mode is put back with the directory metadata
// applied after the deletions.
func writableDir(e *engine, d *fileio.Dir) {
	if e.root || e.skipWrite() {
		return
	}
	if st, err := d.Stat(); err == nil && st.Mode&0o300 != 0o300 {
		_ = d.AsFile().Chmod(st.Mode&0o7777 | 0o700)
	}
}

func (m *mirror) removeEntry(dir *fileio.Dir, x *delEntry) {
	e := m.e
	st, err := dir.Lstat(x.name)
	if err != nil {
		return // gone already
	}
	if (devIno{st.Dev, st.Ino}) != x.id || st.IsDir() != x.dir {
		m.kept(parentRel(x.rel), fmt.Sprintf("%q changed since it was planned for deletion", x.name))
		return
	}
	if !x.dir {
		if e.backups.on() {
			if err := e.backups.preserve(dir, x.name, x.rel, st, true); err != nil {
				e.fail(x.rel, fmt.Errorf("--backup-dir: %w; kept", err))
			}
			return
		}
		if e.skipWrite() {
			e.deleted(x.rel)
			return
		}
		if err := dir.Remove(x.name); err != nil {
			e.fail(x.rel, fmt.Errorf("--delete: %w", err))
			return
		}
		e.deleted(x.rel)
		return
	}
	sub, err := openSubChecked(dir, x.name, x.id)
	if err != nil {
		e.fail(x.rel, fmt.Errorf("--delete: %w", err))
		return
	}
	writableDir(e, sub)
	for i := range x.kids {
		m.removeEntry(sub, &x.kids[i])
	}
	sub.Close()
	if x.keep {
		return
	}
	if e.skipWrite() {
		e.deleted(x.rel)
		return
	}
	if err := dir.RemoveDir(x.name); err != nil {
		e.fail(x.rel, fmt.Errorf("--delete: %w", err))
		return
	}
	e.deleted(x.rel)
}

// deleted counts and reports an entry --delete removed; in a dry run, one
// it would remove (Summary.WouldDelete, reported as would-delete).
func (e *engine) deleted(rel string) {
	e.count(func(s *Summary) {
		if e.opt.DryRun {
			s.WouldDelete++
		} else {
			s.Deleted++
		}
	})
	e.event(ActDelete, rel)
}

// record remembers, after a run that finished, the filesystem each mirrored
// source root was on (see guard).
func (m *mirror) record() {
	e := m.e
	if e.cache == nil || e.opt.DryRun {
		return
	}
	for dst, v := range m.notes {
		k := destNoteKey(dst)
		if k == "" {
			k = sourceNoteKey(fileio.RealPath(dst))
		}
		_ = e.cache.SetNote(k, v)
	}
}

// parentRel is the directory holding rel ("" for the root).
func parentRel(rel string) string {
	d := path.Dir(rel)
	if d == "." || d == "/" {
		return ""
	}
	return strings.TrimSuffix(d, "/")
}

// checkMirror refuses the mirror and move options in combinations Run
// cannot carry out, and makes Move decide by digest (Checksum): a source
// file found unchanged is removed only when its content is known equal.
func (o *Options) checkMirror() error {
	if o.DeleteForce && !o.Delete {
		return &RefusalError{Msg: "--delete-force needs --delete", Hint: "add --delete, or leave --delete-force out"}
	}
	if o.MaxDelete != 0 && !o.Delete {
		return &RefusalError{Msg: "--max-delete needs --delete", Hint: "add --delete, or leave --max-delete out"}
	}
	if o.Move && o.Dereference {
		return &RefusalError{Msg: "--move cannot be used with -L: it would remove files the source's symlinks lead to", Hint: "leave -L out"}
	}
	if o.Move && o.Verify == VerifyOff {
		return &RefusalError{Msg: "--move removes a source only once its copy is verified, which --verify=off forbids", Hint: "use --verify=device (the default) or --verify=cache"}
	}
	if o.BackupDir != "" && strings.TrimSpace(o.BackupDir) == "" {
		return &RefusalError{Msg: "--backup-dir is empty; name a directory"}
	}
	if o.Move {
		o.Checksum = true
	}
	return nil
}

// removes says whether the run removes anything once the copy is durable.
func (e *engine) removes() bool { return e.opt.Delete || e.opt.Move }

// afterFlush runs after the final flush of a run that was not stopped:
// --delete, then --move, then a flush of what they removed or kept.
func (e *engine) afterFlush() error {
	if !e.removes() {
		return nil
	}
	defer e.mover.removed.close()
	err := e.mirror.finish()
	if err == nil {
		e.mirror.record()
		e.mover.finish()
	}
	if e.sum.Deleted > 0 && !e.opt.DryRun {
		// Removing entries moved their directories' times: put the
		// source's back (only those that differ are touched).
		e.commit.applyDirMeta()
	}
	if !e.opt.NoSync && !e.opt.DryRun {
		at, flushErr := time.Now(), error(nil)
		if ferr := e.commit.flushDirs(); ferr != nil {
			flushErr = fmt.Errorf("flushing %q to stable storage: %w", e.dstRootPath, ferr)
		}
		if e.backups.root != nil {
			if ferr := e.backups.root.Syncfs(); ferr != nil && !fileio.IsFallback(ferr) && flushErr == nil {
				flushErr = fmt.Errorf("flushing --backup-dir %q to stable storage: %w", e.backups.path, ferr)
			}
		}
		// What --move removed is flushed on the sources' filesystems too:
		// exit 0 says the sources are gone, and a power cut must not bring
		// them back.
		if ferr := e.mover.flushSources(); ferr != nil && flushErr == nil {
			flushErr = fmt.Errorf("--move: flushing the removals from the sources to stable storage: %w", ferr)
		}
		if flushErr == nil {
			e.records.flushed(at) // the audit log (audit.go)
		} else if err == nil {
			err = flushErr
		}
	}
	if err == nil {
		err = e.ctx.Err()
	}
	return err
}
