package copyengine

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fastcopy/fastcopy/internal/destdir"
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/move"
	"github.com/fastcopy/fastcopy/internal/pairing"
	"github.com/fastcopy/fastcopy/internal/readorder"
	"github.com/fastcopy/fastcopy/internal/source"
	"github.com/fastcopy/fastcopy/internal/staging"
)

const (
	chunkFiles = 64       // entries per chunk handed to a worker
	chunkBytes = 32 << 20 // bytes per chunk
)

// dirWork is a source directory waiting to be listed.
type dirWork struct {
	root    *rootSpec
	srcRel  string           // relative to root.srcDir
	dstRel  string           // relative to the destination root
	created bool             // the destination directory was made by this run (so is empty)
	above   *source.Ancestor // with -L: the directories walked down through to this one
	stage   *stage           // made under its temporary name (created is true)
	ino     uint64           // the source directory's inode (the order of readorder.Dirs; 0 for a root)
	// respelled: the destination directory is one that DEST held under
	// another spelling than the source's (or lies below one): what it
	// holds is not known to be this source directory's copy (fold.go).
	respelled bool
}

// walker is the stage that lists the source: it walks every source
// directory (several at once), makes the destination directories, has the
// decider judge each entry and sends the entries that need work to the
// copier in chunks.
type walker struct {
	e       *engine
	q       *readorder.Dirs[dirWork] // the directories to list
	dstDirs source.Dests             // the directories this run writes in, never walked as a source
	// reads holds the files to read in disk or inode order (readorder.go);
	// nil in listing order, where files go to the copier as listed.
	reads *readQueue
	// src lists the source directories: the filters, -L and the hash
	// cache's own files (internal/source).
	src source.Lister
}

// walk lists every source directory, creates the destination directories,
// decides per entry whether it needs work, and feeds chunks to the workers.
// The scan totals grow as it goes.
func (wk *walker) walk(p *plan) {
	e := wk.e
	o := e.sum.ReadOrder
	if (o == ReadOrderDisk || o == ReadOrderInode) && !e.skipWrite() {
		wk.reads = newReadQueue(e, o)
	} else {
		o = ReadOrderListing // a dry run reads nothing
	}
	q := readorder.NewDirs[dirWork](wk.ordered())
	wk.q = q
	for i := range p.roots {
		r := &p.roots[i]
		if !r.isDir {
			wk.walkFileRoot(r)
			continue
		}
		created := false
		if r.dstRel != "" {
			if !wk.rootName(r) {
				continue
			}
			var ok bool
			if created, ok = wk.ensureDir(nil, r.dstRel, r.src); !ok {
				continue
			}
		} else {
			created = p.create
			if !created && e.dstRoot != nil {
				if st, err := e.dstRoot.Stat(); err == nil {
					wk.writable(e.dstRoot, ".", st)
				}
			}
		}
		wk.recordDir(r, "", r.dstRel, created)
		q.Push(dirWork{root: r, dstRel: r.dstRel, created: created}, 0)
	}
	q.Work(readorder.Listers(o, e.sum.Jobs), func(w dirWork) {
		if e.ctx.Err() == nil && !e.drives.Halted() {
			wk.walkDir(w)
		}
	})
	if wk.ordered() {
		wk.reads.q.Flush() // what the window holds
	}
}

// walkFileRoot handles a SOURCE that is a single file.
func (wk *walker) walkFileRoot(r *rootSpec) {
	e := wk.e
	if !wk.rootName(r) {
		return
	}
	sd, st, err := wk.src.OpenFile(r.srcDir, r.name)
	if err != nil {
		e.fail(r.dstRel, err)
		return
	}
	src := newHandle(sd, "")
	defer src.release()
	var dst *handle
	if e.dstRoot != nil {
		dd, err := e.dstRoot.OpenBeneath(".")
		if err != nil {
			e.fail(r.dstRel, err)
			return
		}
		dst = wk.dstHandle(dd, "")
		defer dst.release()
	}
	en := entry{name: r.name, dstName: r.dstRel, st: st}
	if dst != nil {
		if dst, err := dst.d.Lstat(r.dstRel); err == nil {
			en.dstSt = &dst
		}
		// No listing removes leftovers here: one found is taken up, or
		// replaced, by the copy.
		en.resume = e.copier.resume().Resumable(&st)
	}
	var c []entry
	ens := []entry{en}
	e.decide.lookupCache(r.side, src, dst, "", "", ens)
	en = ens[0]
	if wk.carryOut(e.decide.plan(src, dst, &en, r.dstRel), src, dst, &en, r.dstRel) {
		c = append(c, en)
	}
	wk.sendChunk(src, dst, nil, c)
}

// rootName maps the name a SOURCE gets in the destination root (r.dstRel,
// a single name) as walkDir maps the names in a tree, or fails it.
func (wk *walker) rootName(r *rootSpec) bool {
	e := wk.e
	name, err := e.opt.Names.Map(func() *nameRules { return e.fs.info.NameRulesOf(e.dstRoot) }, r.dstRel)
	if err != nil {
		e.fail(r.dstRel, err)
		return false
	}
	r.dstRel = name
	return true
}

// recordDir gives the committer the source root of r, to set its
// destination directory dstRel's metadata once its contents are in place.
func (wk *walker) recordDir(r *rootSpec, srcRel, dstRel string, created bool) {
	e := wk.e
	if e.skipWrite() {
		return
	}
	if st, err := wk.src.StatRoot(r.srcDir); err == nil {
		e.commit.addDir(dirMeta{srcRoot: r.srcDir, srcRel: srcRel, dstRel: dstRel, st: st, created: created})
	}
}

// ensureDir makes the destination directory rel (in parent, or from the
// root when parent is nil). It reports whether it created it, and false ok
// when the entry failed.
func (wk *walker) ensureDir(parent *fileio.Dir, rel, srcPath string) (created, ok bool) {
	e := wk.e
	if e.skipWrite() {
		if e.dstRoot == nil {
			return true, true
		}
		st, err := e.dstRoot.Lstat(rel)
		return err != nil || !st.IsDir(), true
	}
	dir, name := e.dstRoot, rel
	if parent != nil {
		dir, name = parent, filepath.Base(rel)
	}
	created, st, err := destdir.Ensure(dir, name, srcPath)
	if err != nil {
		e.fail(rel, err)
		return false, false
	}
	if created {
		e.count(func(s *Summary) { s.Dirs++ })
		e.event(ActMkdir, rel)
		return true, true
	}
	wk.writable(dir, name, st)
	return false, true
}

// writable lets the owner write in an existing destination directory that a
// previous run left read-only (destdir.Writable); the source's mode is put
// back with the directory's times, after its contents (applyDirMeta).
func (wk *walker) writable(dir *fileio.Dir, name string, st fileio.Stat) {
	if !wk.e.skipWrite() {
		destdir.Writable(dir, name, st, wk.e.root)
	}
}

// dirList is the listing of one source directory and of its destination,
// as walkDir goes through it: list (open both and read them), classify
// (each name's destination name, stat and kind; directories queued) and
// send (the decider's judgement of each file, chunks to the copier).
type dirList struct {
	wk  *walker
	w   dirWork
	ls  *source.Listing // the source's: its names, those left out, their stat
	sd  *fileio.Dir     // ls.Dir
	src *handle
	dd  *fileio.Dir
	dst *handle

	names    []fileio.DirEntry // the source's (ls.Names)
	listing  []fileio.DirEntry // the destination directory's, when it existed
	excluded []bool            // ls.Excluded
	p        pairing.Pairs     // each source name's in the destination (pairing.Pair)
	dstNames []string          // p.DstNames
	existing map[string]fileio.Stat
	kept     map[string]string // temporaries kept to take up: destination name -> temporary
	files    []entry           // non-directories, planned once the cache is asked
}

func (wk *walker) walkDir(w dirWork) {
	defer w.stage.settle() // the listing's reference: see stage
	l := dirList{wk: wk, w: w}
	if !l.openSource() {
		return
	}
	defer l.src.release()
	if !l.openDest() {
		return
	}
	if l.dst != nil {
		defer l.dst.release()
	}
	l.mapNames()
	if l.dd != nil && !w.created {
		l.existing, l.kept = wk.scanDest(l.dd, w.dstRel, l.names, l.listing, &l.p)
	}
	if len(l.kept) > 0 {
		defer wk.e.copier.dropKept(l.dst, l.kept)
	}
	if !l.classify() {
		return
	}
	wk.e.mirror.noteDir(&l) // --delete: listed in full
	l.send()
}

// openSource opens and lists the source directory (source.Lister.Open);
// with -L it first fails a directory that leads back to one above it.
func (l *dirList) openSource() bool {
	w := l.w
	ls, err := l.wk.src.Open(w.root.srcDir, w.srcRel, w.above)
	if err != nil {
		l.wk.e.fail(w.dstRel, err)
		return false
	}
	l.ls, l.sd, l.names = ls, ls.Dir, ls.Names
	l.src = newHandle(ls.Dir, w.srcRel)
	return true
}

// openDest opens the destination directory (none in a dry run into one not
// made) and lists it when it existed.
func (l *dirList) openDest() bool {
	e, w := l.wk.e, l.w
	if e.dstRoot == nil || (e.skipWrite() && w.created) {
		return true
	}
	dd, err := e.staged.dirs.OpenDir(w.dstRel)
	if err != nil {
		e.fail(w.dstRel, fmt.Errorf("cannot open destination directory without following symlinks: %w", err))
		return false
	}
	if err := move.SameDirAsSource(l.sd, dd); err != nil {
		dd.Close()
		e.fail(w.dstRel, err)
		return false
	}
	l.dd = dd
	l.dst = l.wk.dstHandle(dd, w.dstRel)
	l.wk.dstDirs.Note(dd)
	if !w.created {
		l.listing, _ = dd.ReadDir()
	}
	return true
}

// mapNames pairs the source's names with the destination's
// (pairing.Pair): each one's name there, or why it cannot have one,
// before anything of the directory is written.
func (l *dirList) mapNames() {
	e, dc, dd := l.wk.e, l.wk.e.decide, l.dd
	rules := sync.OnceValue(func() *nameRules {
		if dd == nil {
			return e.fs.info.NameRulesOf(e.dstRoot) // a dry run into a directory not made
		}
		return e.fs.info.NameRulesOf(dd)
	})
	l.ls.Exclude(func(name string) bool { return e.records.LeaveOut(l.w.root.srcDir, l.w.dstRel, name) })
	l.excluded = l.ls.Excluded
	c := pairing.Config{Src: l.names, Excluded: l.excluded, Listing: l.listing, Dir: dd}
	if dd != nil || e.skipWrite() { // a dry run judges a directory it would make (destfs: DryFold)
		c.Fold = dc.e.fs.info.FoldOf(dd, l.listing)
	}
	l.p = pairing.Pair(c, pairing.Rules{
		Map:  func(name string) (string, error) { return e.opt.Names.Map(rules, name) },
		Ours: func(name string) bool { return e.made.OursByName(dd, l.w.dstRel, name) }})
	l.dstNames = l.p.DstNames
	if err := l.ls.RuleErr(); err != nil {
		e.fail(l.w.dstRel, err)
	}
}

// classify stats each source name and sorts it: files are kept for send,
// directories are made (or staged) and queued. It reports false when the
// run stops.
func (l *dirList) classify() bool {
	e, w := l.wk.e, l.w
	if l.wk.ordered() {
		// In disk and inode order: the names in inode order first.
		l.ls.PreStat(e.ctx, l.p.Out)
	}
	l.intendStages()
	for i, n := range l.names {
		if e.ctx.Err() != nil || e.drives.Halted() {
			return false
		}
		if l.excluded[i] {
			continue
		}
		if win, err := l.p.Refused(i); win != "" {
			e.fail(joinRel(w.dstRel, n.Name), &CollisionError{Name: n.Name, Winner: win, Dest: e.dstRootPath, FS: e.fs.info.FSTypeOf(l.dd), How: l.p.Fold.String()})
			continue
		} else if err != nil {
			e.fail(joinRel(w.dstRel, n.Name), err)
			continue
		}
		en, ok := l.entry(i)
		if !ok {
			continue
		}
		if en.st.IsDir() {
			l.subdir(&en)
			continue
		}
		l.files = append(l.files, en)
	}
	return true
}

// intendStages records the staged directories the new subdirectories may
// be made under (internal/made) before the first is made, so that one flush of
// the record covers them all. One that is not staged after all is not
// made, and drops out of the record.
func (l *dirList) intendStages() {
	e, w := l.wk.e, l.w
	if l.dst == nil || e.skipWrite() || !fileio.CanStageDirs {
		return
	}
	for i, n := range l.names {
		if n.Type != fileio.ModeDir || l.p.Out(i) {
			continue
		}
		name := l.dstNames[i]
		if _, ok := l.existing[name]; ok {
			continue
		}
		e.made.Intend(w.dstRel, l.p.TempName(name), true)
	}
}

// entry stats the source name i and makes its entry; ok is false when
// there is nothing to copy.
func (l *dirList) entry(i int) (en entry, ok bool) {
	e, n := l.wk.e, l.names[i]
	dstName := l.dstNames[i]
	dstRel := joinRel(l.w.dstRel, dstName)
	st, ok, err := l.ls.Stat(i)
	if !ok {
		if err != nil { // nil: vanished since the listing, nothing to copy
			e.fail(dstRel, err)
		}
		return entry{}, false
	}
	if l.ls.Own(i, &st) {
		e.event(ActOwnCache, dstRel)
		return entry{}, false
	}
	en = entry{name: n.Name, dstName: dstName, st: st, contested: l.p.Contested[i], tmp: l.p.Tmp(dstName)}
	if _, ok := l.kept[dstName]; ok && e.copier.resume().Resumable(&st) {
		en.resume = true
	}
	if d, ok := l.existing[dstName]; ok {
		en.dstSt = &d
		if l.p.Respelled[i] || l.w.respelled {
			en.clash = l.respellClash(n.Name, dstRel)
		}
	}
	return en, true
}

// subdir makes the destination directory of a source directory (or stages
// it, or notes it in a dry run) and queues it to be listed.
func (l *dirList) subdir(en *entry) {
	e, w, dst := l.wk.e, l.w, l.dst
	srcRel := joinRel(w.srcRel, en.name)
	dstRel := joinRel(w.dstRel, en.dstName)
	if err := l.wk.dstDirs.Into(&en.st, w.root.srcDir, srcRel); err != nil {
		e.fail(dstRel, err)
		return
	}
	if en.dstSt != nil && !en.dstSt.IsDir() {
		e.fail(dstRel, destdir.NotDir(en.dstSt, ""))
		return
	}
	created := en.dstSt == nil
	respelled := !created && en.clash != nil
	var stg *stage
	if dst != nil && !e.skipWrite() {
		var ok bool
		if created {
			if stg, ok = e.staged.stageDir(dst.d, dstRel, en.tempName()); !ok {
				return
			}
		}
		if !created {
			l.wk.writable(dst.d, en.dstName, *en.dstSt) // listed a moment ago: a directory
		} else if stg == nil {
			if created, ok = l.wk.ensureDir(dst.d, dstRel, filepath.Join(w.root.srcDir, srcRel)); !ok {
				return
			}
		}
	} else if created {
		e.staged.wouldStage(dst)
		e.count(func(s *Summary) { s.Dirs++ })
		e.event(ActMkdir, dstRel)
	}
	if !e.skipWrite() {
		e.commit.addDir(dirMeta{srcRoot: w.root.srcDir, srcRel: srcRel, dstRel: dstRel, st: en.st, created: created || stg != nil})
	} else {
		e.mover.NoteDryDir(move.Dir{SrcRoot: w.root.srcDir, SrcRel: srcRel, DstRel: dstRel})
	}
	l.wk.q.Push(dirWork{root: w.root, srcRel: srcRel, dstRel: dstRel, created: created, above: l.ls.Here, stage: stg, ino: en.st.Ino, respelled: respelled}, en.st.Ino)
}

// send asks the hash cache about the directory's files in one lookup, has
// the decider judge each, and sends those that need work to the copier.
func (l *dirList) send() {
	e, w, src, dst := l.wk.e, l.w, l.src, l.dst
	files, kept := l.files, l.kept
	e.decide.lookupCache(w.root.side, src, dst, w.srcRel, w.dstRel, files)
	stg := w.stage
	if stg != nil && !e.opt.hooks.stageable(files) {
		e.staged.publish(stg) // too much to lose to a crash: temporary names instead
		stg = nil
	}
	if dst != nil {
		dst.stage = stg // hard-link names of files placed here hold it back too
	}
	var batch []entry
	var batchBytes int64
	for i := range files {
		en := &files[i]
		tmp, isKept := kept[en.dstName]
		delete(kept, en.dstName)
		if rel := joinRel(w.dstRel, en.dstName); !l.wk.carryOut(e.decide.plan(src, dst, en, rel), src, dst, en, rel) {
			e.passSource(&en.st) // not read by this run
			if isKept {
				e.copier.removeKept(dst, tmp) // unchanged after all: a leftover
			}
			continue
		}
		if isKept && !en.resume {
			e.copier.removeKept(dst, tmp) // before a worker writes a temporary of that name
		}
		batch = append(batch, *en)
		if en.st.IsRegular() {
			batchBytes += en.st.Size
			if stg != nil {
				stg.add()
			}
		}
		if len(batch) >= chunkFiles || batchBytes >= chunkBytes {
			l.intendTemps(stg, batch)
			l.wk.sendChunk(src, dst, stg, batch)
			batch, batchBytes = nil, 0
		}
	}
	l.intendTemps(stg, batch)
	l.wk.sendChunk(src, dst, stg, batch)
}

// intendTemps records the temporaries the files of batch will be written
// under before the workers create them (internal/made), so that one flush of
// the record covers them all: those of new files (a rerun that finds the
// others unchanged writes no record); none in a staged directory, which is
// recorded itself.
func (l *dirList) intendTemps(stg *stage, batch []entry) {
	e := l.wk.e
	if stg != nil || l.dst == nil || e.skipWrite() {
		return
	}
	for i := range batch {
		if batch[i].dstSt == nil { // one that exists may need no temporary: recorded when it does
			e.made.Intend(l.w.dstRel, batch[i].tempName(), false)
		}
	}
}

// scanDest goes through an existing destination directory's listing
// (names) with the record of what runs made (made.Record.Pair): it
// removes leftover temporaries of an interrupted run (those not also
// named in the source) and returns the metadata of the names the source's
// entries get there (dstNames, one for each of src: mapped and in the
// destination's spelling). A leftover that is the temporary of a source
// file, as a regular file, is kept instead (returned in kept, by
// destination name) for the copy to take up or remove (see transfer.Resume); p
// is the directory's pairing, with the temporaries' names.
func (wk *walker) scanDest(dd *fileio.Dir, dstRel string, src []fileio.DirEntry, names []fileio.DirEntry, p *pairing.Pairs) (out map[string]fileio.Stat, kept map[string]string) {
	e := wk.e
	found := e.made.Pair(made.Pair{
		Dir: dd, DirRel: dstRel, Listing: names, Src: src, DstNames: p.DstNames,
		Temp: p.TempName, IsTemp: destfs.IsTempName,
		Resume: !e.opt.NoResume,
	})
	for _, lo := range found.Leftovers {
		n, rel := lo.Entry, joinRel(dstRel, lo.Entry.Name)
		switch {
		case !lo.Ours:
			// Named like a temporary, but not one a run recorded: the
			// user's, or one whose record a crash lost. Never removed
			// or taken up as a leftover.
			e.event(ActLeaveTemp, rel)
		case e.skipWrite():
			e.count(func(s *Summary) { s.TempsRemoved++ }) // would be removed
			e.event(ActCleanTmp, rel)
		default:
			remove := dd.Remove
			if n.Type == fileio.ModeDir {
				remove = func(name string) error { return staging.RemoveTree(dd, name) }
			}
			if err := remove(n.Name); err == nil {
				e.made.Gone(rel)
				e.count(func(s *Summary) { s.TempsRemoved++ })
				e.event(ActCleanTmp, rel)
			}
		}
	}
	return found.Stats, found.Kept
}

// sendChunk hands entries to the workers; the chunk holds its own
// references to the directories. In disk and inode order the regular
// files go to the read window instead (readorder.go).
func (wk *walker) sendChunk(src, dst *handle, st *stage, entries []entry) {
	e := wk.e
	if wk.ordered() && len(entries) > 0 {
		entries = wk.reads.hold(src, dst, st, entries)
	}
	if len(entries) == 0 {
		return
	}
	c := &chunk{src: src.retain(), entries: entries, stage: st}
	if dst != nil {
		c.dst = dst.retain()
	}
	select {
	case e.copier.in <- c:
	case <-e.ctx.Done():
		c.src.release()
		c.dst.release()
	}
}

// dstHandle shares a destination directory the run writes in, noting the
// filesystem it is on.
func (wk *walker) dstHandle(d *fileio.Dir, rel string) *handle {
	e := wk.e
	h := newHandle(d, rel)
	if st, err := d.Stat(); err == nil {
		h.dev, h.devOK = st.Dev, true
		e.written.Add(st.Dev, d, true)
	}
	return h
}
