package mirror

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/namefold"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Config is the whole input of --delete: what is mirrored into what, the
// flags and the bound, the proof the run holds (Proof) and where what is
// done is reported (Report).
type Config struct {
	Dest      string     // DEST as the plan names it
	Create    bool       // DEST is made by this run: it holds nothing yet
	Roots     []Root     // the source roots
	LinkDests []LinkDest // --link-dest
	Force     bool       // --delete-force: the guards of a missing drive are passed
	MaxDelete int        // --max-delete: 0 no bound, < 0 none may be removed
	AsRoot    bool       // the run is root's: a read-only directory is no obstacle
	// MadeName is the name of the record, in DEST's root, of what runs
	// made there: not content, for the guards.
	MadeName string
	// Notes is the hash cache's notes, where the filesystem each source
	// root was on is remembered; nil without a cache.
	Notes Notes
	// Inside reports whether the path a names the place b names or one
	// inside it, by identity (a symlink, a bind mount, a second mount);
	// an error where it cannot tell.
	Inside func(a, b string) (bool, error)
	Proof  Proof
	Report Report
	// Backup keeps the entry name of dir (rel in DEST, of stat st) in
	// --backup-dir and removes it (reporting both); nil without one.
	Backup func(dir *fileio.Dir, name, rel string, st fileio.Stat) error
	// SkipWrite is the dry run's gate (the engine's one), asked at each
	// removal; nil: the run writes.
	SkipWrite func() bool
}

// dry reports whether this is a dry run (SkipWrite; nil: the run writes).
func (c *Config) dry() bool { return c.SkipWrite != nil && c.SkipWrite() }

// Root is a source root: as given, where it is, and where it lands.
type Root struct {
	Arg    string // as the user gave it, for messages
	Dir    string // a directory root's path; a file root's parent
	Name   string // a file root's name
	IsDir  bool
	DstRel string // its destination, relative to DEST
}

// LinkDest is a --link-dest as given and the path it names.
type LinkDest struct {
	Arg, Path string
}

// Notes is where the hash cache keeps a value by key.
type Notes interface {
	Note(key string) (string, bool)
	SetNote(key, value string) error
}

// Proof is what the run knows of DEST that the mirror cannot see itself;
// keep (policy.go) asks it.
type Proof interface {
	// OpenDest opens the destination directory rel beneath DEST's root
	// without following symlinks.
	OpenDest(rel string) (*fileio.Dir, error)
	// Ours reports whether name, in the noted directory dir at dstRel,
	// is fastcopy's own: the record of what runs made, or a temporary
	// or staged directory that record names, which the walk removes or
	// takes up.
	Ours(dir *fileio.Dir, dstRel, name string) bool
	// Excluded reports whether the filter rules leave out the entry e
	// at srcRel in the source root srcRoot.
	Excluded(srcRoot, srcRel string, e fileio.DirEntry) bool
	// History reports whether rel is DEST's ASC MHL history, which the
	// run extends.
	History(rel string) bool
	// Cache reports whether name in dir (of stat st) is the run's hash
	// cache, a journal of it or its presence file.
	Cache(dir *fileio.Dir, name string, st fileio.Stat) bool
}

// Report receives the facts of the pass as they happen.
type Report interface {
	// Removed: rel was removed (a dry run: would be).
	Removed(rel string)
	// Kept: what is in (or is) rel the source lacks was kept, and why.
	Kept(rel, why string)
	// Failed: removing rel failed; it is in place.
	Failed(rel string, err error)
	// Planned: rel would be removed, had the plan kept within
	// --max-delete.
	Planned(rel string)
}

type devIno struct{ dev, ino uint64 }

// Dir is a destination directory the walk listed in full, whose source
// directory was listed too. Only a directory that existed before the run
// (one this run made has nothing to remove) is noted.
type Dir struct {
	DstRel, SrcRel string
	SrcRoot        string // the source root SrcRel is in (the filters' root)
	Dev, Ino       uint64 // the directory as the walk listed it
	// Names holds each source entry's name in the destination and its
	// own name (a name that fails to map keeps what has it).
	Names      []string
	Fold       bool // the destination compares names folded
	Normalises bool // ... and normalised (namefold.Key)
	// Respelled: DEST holds the directory under another spelling than
	// the source's (or it lies below one such): its entries are not known
	// to be this source directory's copies, so the source's lacking them
	// is no proof they may go.
	Respelled bool
}

// noted is a Dir as the pass keeps it: what the source has there, by the
// destination's name key.
type noted struct {
	dstRel, srcRel, srcRoot string
	id                      devIno
	has                     map[string]bool
	fold, normalises        bool
	respelled               bool
}

func (d *noted) key(name string) string {
	if d.fold {
		return namefold.Key(name, d.normalises)
	}
	return name
}

// Pass is one run's --delete: guarded before the copy, fed by the walk,
// finished after the final flush.
type Pass struct {
	cfg   Config
	mu    sync.Mutex
	dirs  []noted
	notes map[string]string // destination directory -> source volume identity, recorded after the run
}

// New returns the pass of cfg.
func New(cfg Config) *Pass { return &Pass{cfg: cfg} }

// Note records the listed directory d. It may be called from several
// goroutines.
func (p *Pass) Note(d Dir) {
	n := noted{dstRel: d.DstRel, srcRel: d.SrcRel, srcRoot: d.SrcRoot, id: devIno{d.Dev, d.Ino}, fold: d.Fold, normalises: d.Normalises, respelled: d.Respelled, has: make(map[string]bool, len(d.Names))}
	for _, name := range d.Names {
		n.has[n.key(name)] = true
	}
	p.mu.Lock()
	p.dirs = append(p.dirs, n)
	p.mu.Unlock()
}

func quote(s string) string { return `"` + s + `"` }

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
func (p *Pass) lastSource(dst string) (string, bool) {
	c := p.cfg.Notes
	if k := destNoteKey(dst); k != "" {
		if was, ok := c.Note(k); ok {
			return was, true
		}
	}
	return c.Note(sourceNoteKey(fileio.RealPath(dst)))
}

// Guard refuses --delete, before anything is written, where a source root
// looks like a drive that is not there: a source root that is empty, or on
// another filesystem than the last time it was mirrored into this
// destination (known from the hash cache's note; without a cache only the
// first check is made), while the destination directory is not empty.
// Force lets the run go on. It refuses a source or a --link-dest inside
// DEST too.
func (p *Pass) Guard() error {
	cfg := &p.cfg
	for i := range cfg.Roots {
		r := &cfg.Roots[i]
		// A source inside DEST (by identity: through a symlink, a bind
		// mount of DEST or of a directory in it, a second mount) is, to
		// DEST, an entry its mirror may lack, and what the filters leave
		// out of it is nowhere else.
		srcPath := r.Dir
		if !r.IsDir {
			srcPath = filepath.Join(r.Dir, r.Name)
		}
		if in, err := cfg.Inside(srcPath, cfg.Dest); err == nil && in {
			return refusal.New(r.Arg, "is inside the destination "+quote(cfg.Dest)+": --delete would remove the source itself", "name a source outside the destination, or leave --delete out")
		}
		if !r.IsDir {
			continue
		}
		dst := filepath.Join(cfg.Dest, filepath.FromSlash(r.DstRel))
		dstFull := !cfg.Create && p.dirHasEntries(dst)
		sd, err := fileio.OpenDir(r.Dir)
		if err != nil {
			return refusal.New(r.Arg, "cannot open source: "+refusal.Text(err), "check the source is there")
		}
		names, err := sd.ReadDir()
		sd.Close()
		if err != nil {
			return refusal.New(r.Arg, "cannot list source: "+refusal.Text(err), "check the source is readable")
		}
		if len(names) == 0 && dstFull && !cfg.Force {
			return refusal.New(r.Arg, "is empty, and --delete would remove everything in "+quote(dst),
				"check that the source drive is mounted; if the source really is empty and the destination should be emptied, add --delete-force")
		}
		if cfg.Notes == nil {
			continue
		}
		vol, err := fileio.IdentifyVolume(r.Dir)
		if err != nil || vol.ID == "" {
			continue // no identity to compare or remember
		}
		if was, ok := p.lastSource(dst); ok && was != vol.ID && dstFull && !cfg.Force {
			return refusal.New(r.Arg, fmt.Sprintf("is on another filesystem (%s) than when it was last mirrored into %q (%s), and --delete would remove what the destination holds and it lacks", vol.ID, dst, was),
				"check that the right drive is mounted at the source; if it is, add --delete-force once to mirror it and remember this filesystem")
		}
		if p.notes == nil {
			p.notes = map[string]string{}
		}
		p.notes[dst] = vol.ID // its key is found in Record: dst may not exist yet
	}
	return p.checkLinkDests()
}

// checkLinkDests refuses a --link-dest that is DEST or lies inside it, by
// identity (a relative one is relative to DEST: "snap1" is DEST/snap1):
// to the mirror it is an entry the source lacks, and --delete would
// remove the earlier copy the run links to.
func (p *Pass) checkLinkDests() error {
	for _, l := range p.cfg.LinkDests {
		if in, err := p.cfg.Inside(l.Path, p.cfg.Dest); err == nil && in {
			return refusal.New(l.Arg, "is inside the destination "+quote(p.cfg.Dest)+": --delete would remove the earlier copy it links to", "name an earlier copy beside the destination (a relative --link-dest is relative to DEST: ../NAME), or leave --delete out")
		}
	}
	return nil
}

// dirHasEntries reports whether the directory at dir exists and holds
// anything but the record of what fastcopy made there (Config.MadeName).
// A name like a temporary's counts: it may be the user's.
func (p *Pass) dirHasEntries(dir string) bool {
	d, err := fileio.OpenDir(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.ReadDir()
	if err != nil {
		return true // cannot tell: treat as holding something
	}
	for _, n := range names {
		if n.Name != p.cfg.MadeName {
			return true
		}
	}
	return false
}

// Record remembers, after a run that finished, the filesystem each
// mirrored source root was on (see Guard).
func (p *Pass) Record() {
	if p.cfg.Notes == nil || p.cfg.dry() {
		return
	}
	for dst, v := range p.notes {
		k := destNoteKey(dst)
		if k == "" {
			k = sourceNoteKey(fileio.RealPath(dst))
		}
		_ = p.cfg.Notes.SetNote(k, v)
	}
}

// entry is one entry --delete removes: a name in a destination
// directory, and for a directory, what is in it.
type entry struct {
	name   string
	rel    string // relative to the destination root
	srcRel string // where it would be in the source (for the exclude rules)
	dir    bool
	id     devIno
	kids   []entry
	keep   bool // a directory holding something kept: emptied, kept
}

// planned is a planned directory: its identity, and its extras.
type planned struct {
	dstRel string
	id     devIno
	extras []entry
}

// Finish removes what the sources lack, after the copy is verified and
// durable; failed holds the paths (relative to DEST) that failed in the
// run. It plans first, and stops before deleting anything when the plan
// exceeds MaxDelete (a *MaxDeleteError); a dry run carries the plan out
// through SkipWrite. It returns ctx's error when ctx ends first.
func (p *Pass) Finish(ctx context.Context, failed []string) error {
	failedIn := map[string]bool{}
	for _, f := range failed {
		failedIn[parentRel(f)] = true
		failedIn[f] = true
	}
	sort.Slice(p.dirs, func(i, j int) bool { return p.dirs[i].dstRel < p.dirs[j].dstRel })
	var plan []planned
	var total int64
	for i := range p.dirs {
		d := &p.dirs[i]
		dd, err := p.plan(d)
		v := p.keep(question{dir: d, relist: err, failed: failedIn[d.dstRel], extras: len(dd.extras)})
		if v.why != "" {
			p.cfg.Report.Kept(d.dstRel, v.why)
		}
		if v.kept {
			continue
		}
		for _, x := range dd.extras {
			total += x.count()
		}
		if len(dd.extras) > 0 {
			plan = append(plan, dd)
		}
	}
	if p.cfg.MaxDelete != 0 && total > int64(max(p.cfg.MaxDelete, 0)) {
		for _, dd := range plan {
			for _, x := range dd.extras {
				x.walk(func(x *entry) { p.cfg.Report.Planned(x.rel) })
			}
		}
		return &MaxDeleteError{Planned: total, Max: p.cfg.MaxDelete} // a dry run says so too
	}
	// A dry run carries the plan out too: each removal and each backup
	// asks SkipWrite, and counts and reports what it would do.
	for _, dd := range plan {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.remove(dd)
	}
	return nil
}

// plan lists the directory d again, through a descriptor opened beneath
// the destination root without following symlinks and checked to be the
// directory the walk listed, and returns what the source lacks there.
func (p *Pass) plan(d *noted) (planned, error) {
	dir, err := p.openChecked(d.dstRel, d.id, "the directory was replaced during the run")
	if err != nil {
		return planned{}, err
	}
	defer dir.Close()
	names, err := dir.ReadDir()
	if err != nil {
		return planned{}, fmt.Errorf("listing it again: %w", err)
	}
	out := planned{dstRel: d.dstRel, id: d.id}
	at := place{dir: dir, in: d, dev: d.id.dev, srcRoot: d.srcRoot}
	for _, n := range names {
		x, ok := p.planEntry(&at, n.Name, joinRel(d.dstRel, n.Name), joinRel(d.srcRel, n.Name))
		if ok {
			out.extras = append(out.extras, x)
		}
	}
	return out, nil
}

// planEntry plans the removal of name in at, and of what is in it for a
// directory; ok is false for an entry that is kept (keep). A directory
// holding something kept at any depth, or that cannot be looked into, is
// emptied of the rest and kept.
func (p *Pass) planEntry(at *place, name, rel, srcRel string) (entry, bool) {
	v := p.keep(question{at: at, name: name, rel: rel, srcRel: srcRel})
	if v.why != "" {
		p.cfg.Report.Kept(rel, v.why)
	}
	if v.kept {
		return entry{}, false
	}
	st := v.st
	x := entry{name: name, rel: rel, srcRel: srcRel, dir: st.IsDir(), id: devIno{st.Dev, st.Ino}}
	if !x.dir {
		return x, true
	}
	sub, err := openSubChecked(at.dir, name, x.id)
	if err != nil {
		x.keep = true // cannot look inside: not removed
		return x, false
	}
	defer sub.Close()
	names, err := sub.ReadDir()
	if err != nil {
		return x, false
	}
	in := place{dir: sub, dev: x.id.dev, srcRoot: at.srcRoot}
	for _, n := range names {
		k, ok := p.planEntry(&in, n.Name, rel+"/"+n.Name, srcRel+"/"+n.Name)
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
func (x *entry) count() int64 {
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
func (x *entry) walk(fn func(*entry)) {
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
func (p *Pass) openChecked(rel string, id devIno, replaced string) (*fileio.Dir, error) {
	dir, err := p.cfg.Proof.OpenDest(rel)
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
func (p *Pass) remove(d planned) {
	dir, err := p.openChecked(d.dstRel, d.id, "the directory was replaced before its extras were removed")
	if err != nil {
		p.cfg.Report.Kept(d.dstRel, refusal.Text(err))
		return
	}
	defer dir.Close()
	p.writable(dir)
	for i := range d.extras {
		p.removeEntry(dir, &d.extras[i])
	}
}

// writable lets the owner remove entries of a directory left read-only
// (as its source is): its mode is put back with the directory metadata
// applied after the deletions.
func (p *Pass) writable(d *fileio.Dir) {
	if p.cfg.AsRoot || p.cfg.dry() {
		return
	}
	if st, err := d.Stat(); err == nil && st.Mode&0o300 != 0o300 {
		_ = d.AsFile().Chmod(st.Mode&0o7777 | 0o700)
	}
}

func (p *Pass) removeEntry(dir *fileio.Dir, x *entry) {
	r := p.cfg.Report
	st, err := dir.Lstat(x.name)
	if err != nil {
		return // gone already
	}
	if (devIno{st.Dev, st.Ino}) != x.id || st.IsDir() != x.dir {
		r.Kept(parentRel(x.rel), fmt.Sprintf("%q changed since it was planned for deletion", x.name))
		return
	}
	if !x.dir {
		if p.cfg.Backup != nil {
			if err := p.cfg.Backup(dir, x.name, x.rel, st); err != nil {
				r.Failed(x.rel, fmt.Errorf("--backup-dir: %w; kept", err))
			}
			return
		}
		if p.cfg.dry() {
			r.Removed(x.rel)
			return
		}
		if err := dir.Remove(x.name); err != nil {
			r.Failed(x.rel, fmt.Errorf("--delete: %w", err))
			return
		}
		r.Removed(x.rel)
		return
	}
	sub, err := openSubChecked(dir, x.name, x.id)
	if err != nil {
		r.Failed(x.rel, fmt.Errorf("--delete: %w", err))
		return
	}
	p.writable(sub)
	for i := range x.kids {
		p.removeEntry(sub, &x.kids[i])
	}
	sub.Close()
	if x.keep {
		return
	}
	if p.cfg.dry() {
		r.Removed(x.rel)
		return
	}
	if err := dir.RemoveDir(x.name); err != nil {
		r.Failed(x.rel, fmt.Errorf("--delete: %w", err))
		return
	}
	r.Removed(x.rel)
}

// parentRel is the directory holding rel ("" for the root).
func parentRel(rel string) string {
	d := path.Dir(rel)
	if d == "." || d == "/" {
		return ""
	}
	return strings.TrimSuffix(d, "/")
}

// joinRel joins a slash-separated relative directory and a name.
func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
