package copyengine

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/namefold"
)

const (
	chunkFiles = 64       // entries per chunk handed to a worker
	chunkBytes = 32 << 20 // bytes per chunk
)

// dirWork is a source directory waiting to be listed.
type dirWork struct {
	root    *rootSpec
	srcRel  string    // relative to root.srcDir
	dstRel  string    // relative to the destination root
	created bool      // the destination directory was made by this run (so is empty)
	above   *ancestor // with -L: the directories walked down through to this one
	stage   *stage    // made under its temporary name (created is true)
}

// ancestor is a source directory on the way down from a walk root. With -L
// a followed symlink that leads back to one of them is a loop; one that
// leads elsewhere, even to a directory copied already, is copied again, as
// cp -L does.
type ancestor struct {
	key devIno
	up  *ancestor
}

// walkQueue is a LIFO of directories with a count of those not yet done;
// LIFO keeps the walk depth-first, so the queue stays short.
type walkQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []dirWork
	pending int
}

func (q *walkQueue) push(w dirWork) {
	q.mu.Lock()
	q.items = append(q.items, w)
	q.pending++
	q.mu.Unlock()
	q.cond.Signal()
}

// pop blocks until a directory is available; ok is false when all are done.
func (q *walkQueue) pop() (dirWork, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && q.pending > 0 {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return dirWork{}, false
	}
	w := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return w, true
}

func (q *walkQueue) done() {
	q.mu.Lock()
	q.pending--
	if q.pending == 0 {
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

// walk lists every source directory, creates the destination directories,
// decides per entry whether it needs work, and feeds chunks to the workers.
// The scan totals grow as it goes.
func (e *engine) walk(p *plan) {
	q := &walkQueue{}
	q.cond = sync.NewCond(&q.mu)
	for i := range p.roots {
		r := &p.roots[i]
		if !r.isDir {
			e.walkFileRoot(r)
			continue
		}
		created := false
		if r.dstRel != "" {
			if !e.rootName(r) {
				continue
			}
			var ok bool
			if created, ok = e.ensureDir(nil, r.dstRel, r.src); !ok {
				continue
			}
		} else {
			created = p.create
			if !created && e.dstRoot != nil {
				if st, err := e.dstRoot.Stat(); err == nil {
					e.writable(e.dstRoot, ".", st)
				}
			}
		}
		e.recordDir(r, "", r.dstRel, created)
		q.push(dirWork{root: r, dstRel: r.dstRel, created: created})
	}
	walkers := e.sum.Jobs
	if walkers > 8 {
		walkers = 8
	}
	if walkers < 2 {
		walkers = 2 // listing overlaps copying even with one copy stream
	}
	var wg sync.WaitGroup
	for i := 0; i < walkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				w, ok := q.pop()
				if !ok {
					return
				}
				if e.ctx.Err() == nil && !e.halted() {
					e.walkDir(q, w)
				}
				q.done()
			}
		}()
	}
	wg.Wait()
}

// walkFileRoot handles a SOURCE that is a single file.
func (e *engine) walkFileRoot(r *rootSpec) {
	if !e.rootName(r) {
		return
	}
	sd, err := fileio.OpenDir(r.srcDir)
	if err != nil {
		e.fail(r.dstRel, err)
		return
	}
	st, err := sd.StatFollow(r.name)
	if err != nil {
		sd.Close()
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
		dst = e.dstHandle(dd, "")
		defer dst.release()
	}
	en := entry{name: r.name, dstName: r.dstRel, st: st}
	if dst != nil {
		if dst, err := dst.d.Lstat(r.dstRel); err == nil {
			en.dstSt = &dst
		}
		// No listing removes leftovers here: one found is taken up, or
		// replaced, by the copy.
		en.resume = e.resumable(&st)
	}
	var c []entry
	ens := []entry{en}
	e.lookupCache(r.side, src, dst, "", "", ens)
	en = ens[0]
	if e.plan(src, dst, &en, r.dstRel) {
		c = append(c, en)
	}
	e.sendChunk(src, dst, nil, c)
}

// rootName maps the name a SOURCE gets in the destination root (r.dstRel,
// a single name) as walkDir maps the names in a tree, or fails it.
func (e *engine) rootName(r *rootSpec) bool {
	name, err := e.opt.Names.destName(func() *nameRules { return e.nameRulesOf(e.dstRoot) }, r.dstRel)
	if err != nil {
		e.fail(r.dstRel, err)
		return false
	}
	r.dstRel = name
	return true
}

func (e *engine) recordDir(r *rootSpec, srcRel, dstRel string, created bool) {
	if e.opt.DryRun {
		return
	}
	sd, err := fileio.OpenDir(r.srcDir)
	if err != nil {
		return
	}
	defer sd.Close()
	st, err := sd.Stat()
	if err == nil {
		e.mu.Lock()
		e.dirs = append(e.dirs, dirMeta{srcRoot: r.srcDir, srcRel: srcRel, dstRel: dstRel, st: st, created: created})
		e.mu.Unlock()
	}
}

// ensureDir makes the destination directory rel (in parent, or from the
// root when parent is nil). It reports whether it created it, and false ok
// when the entry failed.
func (e *engine) ensureDir(parent *fileio.Dir, rel, srcPath string) (created, ok bool) {
	if e.opt.DryRun {
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
	err := dir.Mkdir(name, 0o700)
	if err == nil {
		e.count(func(s *Summary) { s.Dirs++ })
		e.event(ActMkdir, rel)
		return true, true
	}
	if !fileio.IsExist(err) {
		e.fail(rel, err)
		return false, false
	}
	st, err := dir.Lstat(name)
	if err != nil {
		e.fail(rel, err)
		return false, false
	}
	if !st.IsDir() {
		e.fail(rel, fmt.Errorf("destination exists and is a %s, but the source %q is a directory; remove it and rerun", fileio.Describe(st.Mode), srcPath))
		return false, false
	}
	e.writable(dir, name, st)
	return false, true
}

// writable lets the owner write in an existing destination directory that a
// previous run left read-only (as its source is), so that a non-root rerun
// can add to it. Root needs no permission bits. The source's mode is put
// back with the directory's times, after its contents (applyDirMeta).
func (e *engine) writable(dir *fileio.Dir, name string, st fileio.Stat) {
	if e.root || e.opt.DryRun || st.Mode&0o300 == 0o300 {
		return
	}
	_ = dir.Chmod(name, st.Mode&0o7777|0o700)
}

func (e *engine) openSrcDir(w dirWork) (*fileio.Dir, error) {
	root, err := fileio.OpenDir(w.root.srcDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if e.opt.Dereference {
		// Through descriptors too: a joined path past PATH_MAX cannot be
		// opened in one call.
		return root.OpenFollow(w.srcRel)
	}
	return root.OpenBeneath(w.srcRel)
}

func (e *engine) walkDir(q *walkQueue, w dirWork) {
	defer w.stage.settle() // the listing's reference: see stage
	sd, err := e.openSrcDir(w)
	if err != nil {
		e.fail(w.dstRel, err)
		return
	}
	src := newHandle(sd, w.srcRel)
	defer src.release()
	var here *ancestor
	if e.opt.Dereference {
		if st, err := sd.Stat(); err == nil {
			k := devIno{st.Dev, st.Ino}
			for a := w.above; a != nil; a = a.up {
				if a.key == k {
					e.fail(w.dstRel, fmt.Errorf("directory loop through a followed symlink: %q leads back to a directory above it", filepath.Join(w.root.srcDir, w.srcRel)))
					return
				}
			}
			here = &ancestor{key: k, up: w.above}
		}
	}
	names, err := sd.ReadDir()
	if err != nil {
		e.fail(w.dstRel, err)
		return
	}

	var dst *handle
	var dd *fileio.Dir
	var listing []fileio.DirEntry // the destination directory's, when it existed
	if e.dstRoot != nil && !(e.opt.DryRun && w.created) {
		dd, err = e.openDst(w.dstRel)
		if err != nil {
			e.fail(w.dstRel, fmt.Errorf("cannot open destination directory without following symlinks: %w", err))
			return
		}
		dst = e.dstHandle(dd, w.dstRel)
		defer dst.release()
		e.destDir(dd)
		if !w.created {
			listing, _ = dd.ReadDir()
		}
	}
	// Each source name's name in the destination, or why it cannot have
	// one there: before anything of the directory is written.
	rules := sync.OnceValue(func() *nameRules {
		if dd == nil {
			return e.nameRulesOf(e.dstRoot) // a dry run into a directory not made
		}
		return e.nameRulesOf(dd)
	})
	dstNames := make([]string, len(names))
	nameErrs := make([]error, len(names))
	excluded := make([]bool, len(names))
	mapped := false
	for i, n := range names {
		excluded[i] = e.excluded(joinRel(w.srcRel, n.Name))
		dstNames[i], nameErrs[i] = e.opt.Names.destName(rules, n.Name)
		mapped = mapped || dstNames[i] != n.Name
	}
	if mapped {
		e.nameCollisions(names, dstNames, nameErrs, excluded)
	}
	// Then which of those names are one name on a destination that folds
	// them (see fold.go), and the spelling the destination holds.
	var fold *foldInfo
	lost := make([]string, len(names)) // the name that holds this one's destination name
	contested := make([]bool, len(names))
	if dd != nil {
		if fi := e.foldOf(dd, listing); fi.on() {
			fold = &foldInfo{}
			*fold = fi
			var cands []string
			for i := range names {
				if !excluded[i] && nameErrs[i] == nil {
					cands = append(cands, dstNames[i])
				}
			}
			fp := planFold(dd, fi, cands, listing)
			for i := range names {
				if win, ok := fp.lost[dstNames[i]]; ok {
					lost[i] = win
				}
				contested[i] = fp.contested[dstNames[i]]
				dstNames[i] = fp.dstName(dstNames[i])
			}
		}
	}
	nameKey := func(s string) string { return s }
	if fold != nil {
		nameKey = func(s string) string { return namefold.Key(s, fold.normalises) }
	}

	// Destination names that are temporaries' names ("a" beside
	// ".a.fastcopy-tmp"): their neighbours get other temporaries, so that
	// writing one never removes or replaces the copy of the other. On a
	// destination that folds names, a name that folds to a temporary's
	// counts too.
	var tempLike map[string]bool
	for _, n := range dstNames {
		if isTempName(n) {
			if tempLike == nil {
				tempLike = map[string]bool{}
			}
			tempLike[nameKey(n)] = true
		}
	}
	taken := func(t string) bool { return tempLike[nameKey(t)] }

	var existing map[string]fileio.Stat
	var kept map[string]string // temporaries kept to take up: destination name -> temporary
	if dd != nil && !w.created {
		existing, kept = e.scanDest(dd, w.dstRel, names, dstNames, listing, taken)
	}
	if len(kept) > 0 {
		defer e.dropKept(dst, kept)
	}

	var files []entry // non-directories, planned once the cache is asked
	for i, n := range names {
		if e.ctx.Err() != nil || e.halted() {
			return
		}
		srcRel := joinRel(w.srcRel, n.Name)
		if excluded[i] {
			continue
		}
		if nameErrs[i] != nil {
			e.fail(joinRel(w.dstRel, n.Name), nameErrs[i])
			continue
		}
		if win := lost[i]; win != "" {
			e.fail(joinRel(w.dstRel, n.Name), &CollisionError{Name: n.Name, Winner: win, Dest: e.dstRootPath, FS: e.fsTypeOf(dst.d), How: fold.String()})
			continue
		}
		dstName := dstNames[i]
		dstRel := joinRel(w.dstRel, dstName)
		var st fileio.Stat
		if e.opt.Dereference {
			st, err = sd.StatFollow(n.Name)
		} else {
			st, err = sd.Lstat(n.Name)
		}
		if err != nil {
			if !fileio.IsNotExist(err) { // vanished since the listing: nothing to copy
				e.fail(dstRel, err)
			} else if _, lerr := sd.Lstat(n.Name); lerr == nil && e.opt.Dereference {
				// Still there: a symlink whose target is missing, which
				// -L cannot follow (cp -L and rsync -L fail it too).
				e.fail(dstRel, fmt.Errorf("-L: the symlink's target does not exist: %w", err))
			}
			continue
		}
		if st.IsRegular() && st.Ino != 0 && ((devIno{st.Dev, st.Ino}) == e.ownFile || e.ownJournal(sd, n.Name)) {
			e.event(ActOwnCache, dstRel)
			continue
		}
		en := entry{name: n.Name, dstName: dstName, st: st, contested: contested[i]}
		if taken(tempName(dstName)) {
			en.tmp = freeTempName(dstName, taken)
		}
		if _, ok := kept[dstName]; ok && e.resumable(&st) {
			en.resume = true
		}
		if d, ok := existing[dstName]; ok {
			en.dstSt = &d
		}
		if st.IsDir() {
			if e.isDestDir(st) {
				// Reached through -L (a symlink to a directory above
				// DEST) or a mount: copying it would copy the copy.
				e.fail(dstRel, fmt.Errorf("cannot copy a directory into itself: %q is a directory this run writes in", filepath.Join(w.root.srcDir, srcRel)))
				continue
			}
			if en.dstSt != nil && !en.dstSt.IsDir() {
				e.fail(dstRel, fmt.Errorf("destination exists and is a %s, but the source is a directory; remove it and rerun", fileio.Describe(en.dstSt.Mode)))
				continue
			}
			created := en.dstSt == nil
			var stg *stage
			if dst != nil && !e.opt.DryRun {
				var ok bool
				if created {
					if stg, ok = e.stageDir(dst.d, dstRel, en.tempName()); !ok {
						continue
					}
				}
				if !created {
					e.writable(dst.d, dstName, *en.dstSt) // listed a moment ago: a directory
				} else if stg == nil {
					if created, ok = e.ensureDir(dst.d, dstRel, filepath.Join(w.root.srcDir, srcRel)); !ok {
						continue
					}
				}
			} else if created {
				e.count(func(s *Summary) { s.Dirs++ })
				e.event(ActMkdir, dstRel)
			}
			if !e.opt.DryRun {
				e.mu.Lock()
				e.dirs = append(e.dirs, dirMeta{srcRoot: w.root.srcDir, srcRel: srcRel, dstRel: dstRel, st: st, created: created || stg != nil})
				e.mu.Unlock()
			}
			q.push(dirWork{root: w.root, srcRel: srcRel, dstRel: dstRel, created: created, above: here, stage: stg})
			continue
		}
		files = append(files, en)
	}
	// What the hash cache knows of this directory's files, in one lookup.
	e.lookupCache(w.root.side, src, dst, w.srcRel, w.dstRel, files)
	stg := w.stage
	if stg != nil && !stageable(files) {
		e.publish(stg) // too much to lose to a crash: temporary names instead
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
		if !e.plan(src, dst, en, joinRel(w.dstRel, en.dstName)) {
			if isKept {
				e.removeKept(dst, tmp) // unchanged after all: a leftover
			}
			continue
		}
		if isKept && !en.resume {
			e.removeKept(dst, tmp) // before a worker writes a temporary of that name
		}
		batch = append(batch, *en)
		if en.st.IsRegular() {
			batchBytes += en.st.Size
			if stg != nil {
				stg.add()
			}
		}
		if len(batch) >= chunkFiles || batchBytes >= chunkBytes {
			e.sendChunk(src, dst, stg, batch)
			batch, batchBytes = nil, 0
		}
	}
	e.sendChunk(src, dst, stg, batch)
}

// nameCollisions fails the source names that land on a destination name
// another source name has: decoding is not one to one ("a:b" and "a：b"
// both decode to "a:b"). A name kept as it is wins, then the first in
// listing order; the others are failed, never let replace it. Excluded
// names take no part.
func (e *engine) nameCollisions(names []fileio.DirEntry, dstNames []string, errs []error, excluded []bool) {
	owner := make(map[string]string, len(names))
	for i, n := range names {
		if errs[i] == nil && !excluded[i] && dstNames[i] == n.Name {
			owner[n.Name] = n.Name
		}
	}
	for i, n := range names {
		if errs[i] != nil || excluded[i] || dstNames[i] == n.Name {
			continue
		}
		if prev, ok := owner[dstNames[i]]; ok {
			errs[i] = fmt.Errorf("name becomes %q in the destination, as %q does", dstNames[i], prev)
			continue
		}
		owner[dstNames[i]] = n.Name
	}
}

// stageDir makes the new destination directory rel (name in parent) under
// its temporary name tmp and returns its stage, or nil where directories are
// not staged or tmp cannot be made: then it is made under its own name.
//
// The stage remembers the directory made by its inode, taken from a
// descriptor opened right after mkdir, which must be a directory of this
// process's owner with nothing in it: another writer of the destination
// who swapped the name in that moment could put there only an empty
// directory of their own owner (which fails it here), or one of ours that
// is empty. ok is false when it failed.
func (e *engine) stageDir(parent *fileio.Dir, rel, tmp string) (s *stage, ok bool) {
	if !fileio.CanStageDirs || e.opt.DryRun || !e.dirRenameKeeps(parent) {
		return nil, true
	}
	if err := parent.Mkdir(tmp, 0o700); err != nil {
		return nil, true
	}
	e.count(func(s *Summary) { s.Dirs++ })
	e.event(ActMkdir, rel)
	sd, err := parent.OpenSub(tmp)
	if err != nil {
		e.fail(rel, err)
		return nil, false
	}
	defer sd.Close()
	st, err := sd.Stat()
	if err == nil && (!st.IsDir() || int(st.Uid) != e.euid) {
		err = fmt.Errorf("%q: %w", joinRel(stageParent(rel), tmp), errStageReplaced)
	}
	if err == nil {
		if names, rerr := sd.ReadDir(); rerr != nil {
			err = rerr
		} else if len(names) > 0 {
			err = fmt.Errorf("%q: %w", joinRel(stageParent(rel), tmp), errStageReplaced)
		}
	}
	if errors.Is(err, errStageReplaced) {
		e.fail(rel, &MismatchError{Path: rel, Cause: err.Error()})
		return nil, false
	} else if err != nil {
		e.fail(rel, err)
		return nil, false
	}
	return e.newStage(rel, tmp, devIno{st.Dev, st.Ino}), true
}

// scanDest goes through an existing destination directory's listing
// (names): it removes leftover temporaries of an interrupted run (those not
// also named in the source) and returns the metadata of the names the
// source's entries get there (dstNames, one for each of src: mapped and in
// the destination's spelling). A leftover that is the temporary of a source
// file, as a regular file, is kept instead (returned in kept, by
// destination name) for the copy to take up or remove (see resumer); taken
// tells the destination names that are temporaries'.
func (e *engine) scanDest(dd *fileio.Dir, dstRel string, src []fileio.DirEntry, dstNames []string, names []fileio.DirEntry, taken func(string) bool) (out map[string]fileio.Stat, kept map[string]string) {
	if len(names) == 0 {
		return nil, nil
	}
	inSrc := make(map[string]bool, len(src))
	var tempOf map[string]string // temporary -> destination name of a source file
	for i, n := range src {
		name := dstNames[i]
		inSrc[name] = true
		if n.Type == fileio.ModeRegular && !e.opt.NoResume {
			if tempOf == nil {
				tempOf = map[string]string{}
			}
			en := entry{dstName: name}
			if taken(tempName(name)) {
				en.tmp = freeTempName(name, taken)
			}
			tempOf[en.tempName()] = name
		}
	}
	out = make(map[string]fileio.Stat)
	for _, n := range names {
		if inSrc[n.Name] {
			if st, err := dd.Lstat(n.Name); err == nil {
				out[n.Name] = st
			}
			continue
		}
		if of, ok := tempOf[n.Name]; ok && n.Type == fileio.ModeRegular {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[of] = n.Name
			continue
		}
		if isTempName(n.Name) && !e.opt.DryRun {
			remove := dd.Remove
			if n.Type == fileio.ModeDir {
				remove = func(name string) error { return removeTree(dd, name) }
			}
			if err := remove(n.Name); err == nil {
				e.count(func(s *Summary) { s.TempsRemoved++ })
				e.event(ActCleanTmp, joinRel(dstRel, n.Name))
			}
		}
	}
	return out, kept
}

// plan counts a non-directory entry and decides whether it needs work. It
// handles the unchanged case (and source hard links) itself.
func (e *engine) plan(src, dst *handle, en *entry, dstRel string) bool {
	st := &en.st
	if st.IsSymlink() {
		t, err := src.d.Readlink(en.name)
		if err != nil {
			e.stats.FilesTotal.Add(1)
			e.fail(dstRel, err)
			return false
		}
		en.target = t
	}
	e.stats.FilesTotal.Add(1)
	if st.IsRegular() {
		e.stats.BytesTotal.Add(st.Size)
	}
	if err := e.tooLarge(st); err != nil {
		e.fail(dstRel, err)
		return false
	}
	links := st.IsRegular() && st.Nlink > 1 && e.hasLinks()
	if st.IsRegular() && st.Nlink > 1 && !links {
		en.linkCopy = e.linkCopy(st)
	}
	// A source inode seen before becomes a hard link to its first copy.
	if links {
		k := devIno{st.Dev, st.Ino}
		e.mu.Lock()
		g, seen := e.links[k]
		if !seen {
			g = &linkGroup{leaderRel: dstRel, done: make(chan struct{})}
			e.links[k] = g
		} else {
			f := linkFollower{rel: dstRel, group: g, st: *st, tmp: en.tmp}
			if dst != nil && dst.stage != nil {
				// Its directory is published once the name is placed.
				f.stage = dst.stage
				f.stage.add()
			}
			e.followers = append(e.followers, f)
		}
		e.mu.Unlock()
		if seen {
			return false
		}
		en.group = g
		if e.unchanged(dst, en) {
			e.skip(dstRel, st.Size, en.fixed)
			g.sum = e.recordUnchanged(dstRel, en)
			g.ok, g.ino = true, devIno{en.dstSt.Dev, en.dstSt.Ino}
			close(g.done)
			return false
		}
		return true
	}
	if e.unchanged(dst, en) {
		e.skip(dstRel, st.Size, en.fixed)
		if st.IsRegular() {
			e.recordUnchanged(dstRel, en)
		}
		return false
	}
	return true
}

// skip counts an unchanged entry and reports it once: as "metadata" when
// its times, mode or owner were brought up to date (fixed), else as "skip".
func (e *engine) skip(rel string, size int64, fixed bool) {
	e.count(func(s *Summary) {
		s.Skipped++
		if fixed {
			s.MetaUpdated++
		}
	})
	e.stats.FilesDone.Add(1)
	e.stats.BytesDone.Add(size)
	if fixed {
		e.event(ActMeta, rel)
	} else {
		e.event(ActSkip, rel)
	}
}

// unchanged reports whether the destination already holds this entry: same
// type, and for files the same size and mtime (unless --force); for
// symlinks the same target. Differing permission bits or owner are brought
// up to date in place.
func (e *engine) unchanged(dst *handle, en *entry) bool {
	d := en.dstSt
	if d == nil || e.opt.Force || d.Type() != en.st.Type() {
		return false
	}
	s := &en.st
	switch {
	case s.IsRegular():
		if !e.sameContent(dst, en) {
			return false
		}
		if _, _, _, _, differs := e.metaWanted(en); differs && d.Nlink > 1 {
			// A shared inode (a hard link) cannot take this file's new
			// mode without changing the other names: replace it instead.
			return false
		}
	case s.IsSymlink():
		if dst == nil {
			return false
		}
		t, err := dst.d.Readlink(en.dstName)
		return err == nil && t == en.target
	case s.Type() == fileio.ModeChar || s.Type() == fileio.ModeBlock:
		if d.Rdev != s.Rdev {
			return false
		}
	}
	if dst != nil && !e.opt.DryRun {
		e.fixMeta(dst, en)
	}
	return true
}

// destDir notes d as a directory this run writes in (the destination root
// or one below it), which the walk never enters as a source directory.
// Every destination directory is noted before the source directories
// below its own source are listed, so a source directory that leads back
// to one the copy is being written into is always caught.
func (e *engine) destDir(d *fileio.Dir) {
	if st, err := d.Stat(); err == nil && st.Ino != 0 {
		e.dstDirs.Store(devIno{st.Dev, st.Ino}, true)
	}
}

// isDestDir says whether the source directory st is one this run writes in.
func (e *engine) isDestDir(st fileio.Stat) bool {
	if st.Ino == 0 {
		return false
	}
	_, ok := e.dstDirs.Load(devIno{st.Dev, st.Ino})
	return ok
}
