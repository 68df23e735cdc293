package copyengine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/meta"
	"github.com/fastcopy/fastcopy/verify"
)

// linkDests is the stage that makes snapshots (--link-dest, rsync's
// meaning): a file to be copied whose counterpart at the same relative
// path under one of the directories has the same content and the
// metadata the copy would have becomes a hard link to that counterpart.
//
// The content is established by digest, never by size and mtime: the
// counterpart's by reading it from the device (its cached pages dropped
// first), whatever its hash-cache entry says, since the link shares its
// bytes and an entry vouches for a stat, not for bytes (a counterpart
// whose valid entry records another digest is rotten: named, not linked
// to); the source's from its valid entry or by reading it. The link is made
// under a temporary name; it must lead to the inode whose digest was
// established, unchanged (and, where the platform can watch it, not
// written meanwhile), before it is renamed onto the final name, and the
// run's final flush covers it as any other rename.
type linkDests struct {
	e      *engine
	dirs   []linkDestDir
	pols   sync.Map // source dev -> hashcache.Policy
	rootFS uint64   // the filesystem DEST is (or, in a dry run, would be) on
}

// linkDestDir is one --link-dest directory, opened.
type linkDestDir struct {
	arg  string // as given
	d    *fileio.Dir
	side cacheSide
}

// open resolves and opens the --link-dest directories: a relative one is
// relative to the destination directory dstRoot, as with rsync. One that
// cannot be opened is noted and left out; the files are then copied.
func (ld *linkDests) open(dstRoot string, undo *closers) {
	e := ld.e
	if len(e.opt.LinkDest) == 0 {
		return
	}
	// The filesystem DEST is on, or its nearest existing parent's, where
	// a dry run has no DEST yet.
	for p := dstRoot; ; p = filepath.Dir(p) {
		if d, err := fileio.OpenDir(p); err == nil {
			if st, err := d.Stat(); err == nil {
				ld.rootFS = st.Dev
			}
			d.Close()
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	for _, arg := range e.opt.LinkDest {
		p := linkDestPath(dstRoot, arg)
		if r, err := fileio.Resolve(p); err == nil && hasDotDot(p) {
			p = r
		}
		d, err := fileio.OpenDir(p)
		if err != nil {
			ld.note(fmt.Sprintf("--link-dest %q (%s) cannot be used: %s; files are copied, not linked to it", arg, p, ErrText(err)))
			continue
		}
		undo.add(func() { d.Close() })
		ld.dirs = append(ld.dirs, linkDestDir{arg: arg, d: d, side: newCacheSide(p)})
	}
}

// linkDestPath is where the --link-dest arg lies: a relative one is
// relative to the destination directory dstRoot, resolved by the kernel
// from DEST itself, never cut as text: where DEST is reached through a
// symlink, DEST/.. is the parent of the symlink's target, not of the
// symlink. Only a ".." from a part of DEST not made yet (a dry run, a
// DEST to be created) is taken as text: that part will be plain
// directories, made where the resolved path says.
func linkDestPath(dstRoot, arg string) string {
	if filepath.IsAbs(arg) {
		return arg
	}
	base := dstRoot
	if r, err := fileio.Resolve(dstRoot); err == nil {
		base = r
	}
	parts := strings.Split(filepath.ToSlash(arg), "/")
	for len(parts) > 0 && (parts[0] == ".." || parts[0] == "." || parts[0] == "") {
		if parts[0] == ".." {
			if _, err := os.Lstat(base); err == nil {
				break // from here the kernel resolves it
			}
			base = filepath.Dir(base)
		}
		parts = parts[1:]
	}
	return base + string(filepath.Separator) + filepath.FromSlash(strings.Join(parts, "/"))
}

func (ld *linkDests) note(msg string) {
	e := ld.e
	e.count(func(s *Summary) { s.LinkDestNotes = append(s.LinkDestNotes, msg) })
}

// linkCand is a counterpart under a --link-dest directory.
type linkCand struct {
	dir  *linkDestDir
	d    *fileio.Dir // its directory, opened below the --link-dest root
	name string
	rel  string // its path below the --link-dest root
	st   fileio.Stat
}

// place links en (rel in the destination) to its counterpart under the
// first --link-dest directory that holds it with the same content and
// metadata, and reports whether en is done (linked, or failed and
// reported). A dry run decides the same, reading what the real run
// reads, and links nothing.
func (ld *linkDests) place(c *chunk, en *entry, rel string, buf []byte) bool {
	e := ld.e
	if len(ld.dirs) == 0 || !en.st.IsRegular() || en.linkCopy {
		return false
	}
	dirRel, name := splitRel(rel)
	var srcSum verify.Sum
	srcKnown := false
	var fallback error // why a counterpart that matched could not be linked
	for i := range ld.dirs {
		cand, ok := ld.candidate(&ld.dirs[i], dirRel, name, en)
		if !ok {
			continue
		}
		done, linked, err := func() (bool, bool, error) {
			defer cand.d.Close()
			sum, est, readAt, ok := ld.digest(cand, rel, buf)
			if !ok {
				return false, false, nil
			}
			if !srcKnown {
				s, ok := ld.sourceDigest(c, en, buf)
				if !ok {
					return true, false, nil // the source could not be read: copied, which reports why
				}
				srcSum, srcKnown = s, true
			}
			if sum != srcSum || !ld.sameXattrs(c, en, cand) {
				return false, false, nil
			}
			if dst := ld.destDev(c); dst != est.Dev {
				return false, false, fmt.Errorf("%w: --link-dest %q is on another filesystem than the destination", syscall.EXDEV, cand.dir.arg)
			}
			if e.opt.DryRun {
				ld.report(c, en, rel, srcSum, est, nil, readAt)
				return true, true, nil
			}
			return ld.link(c, en, rel, cand, est, srcSum, readAt)
		}()
		if err != nil {
			fallback = err
			continue
		}
		if linked {
			return true
		}
		if done {
			break
		}
	}
	if fallback != nil {
		if e.opt.OnEvent != nil {
			e.opt.OnEvent(Event{Action: ActLinkDestCopy, Path: rel, Err: fallback})
		}
		ld.note(fmt.Sprintf("%q: not linked (%s); copied", rel, ErrText(fallback)))
	}
	return false
}

// candidate finds en's counterpart under dir: a regular file of the same
// size whose mode, owner and mtime are what the copy would get (a hard
// link shares its inode's). Its directory is opened below dir without
// following symlinks.
func (ld *linkDests) candidate(dir *linkDestDir, dirRel, name string, en *entry) (linkCand, bool) {
	e := ld.e
	d, err := dir.d.OpenBeneath(dirRel)
	if err != nil {
		return linkCand{}, false
	}
	st, err := d.Lstat(name)
	if err != nil || !st.IsRegular() || st.Size != en.st.Size ||
		(en.dstSt != nil && en.dstSt.Dev == st.Dev && en.dstSt.Ino == st.Ino) {
		d.Close()
		return linkCand{}, false
	}
	m := e.dedupe.dedupMeta(&en.st)
	modeOK := st.Mode&0o7777 == m.Mode || e.fs.modesLost(st.Dev)
	if !modeOK || st.Uid != m.Uid || st.Gid != m.Gid || !sameMtime(st.Mtime, en.st.Mtime, en.gran) {
		d.Close()
		return linkCand{}, false
	}
	return linkCand{dir: dir, d: d, name: name, rel: joinRel(dirRel, name), st: st}, true
}

// digest establishes the counterpart's content by reading it from the
// device, its cached pages dropped first: the link will share these
// bytes, and a valid hash-cache entry says only that the stat is the one
// hashed, not that the bytes on the device are still those (bit rot
// leaves the stat alone). A counterpart whose valid entry records another
// digest than the one read is rotten: named (rel is the file's in DEST)
// and not linked to; its entry is marked rotten (hashcache.Entry.Rotten). It
// returns the stat the digest holds for and when the read began.
func (ld *linkDests) digest(cand linkCand, rel string, buf []byte) (verify.Sum, fileio.Stat, time.Time, bool) {
	e := ld.e
	if cand.st.Size == 0 {
		return verify.Bytes(nil), cand.st, time.Time{}, true
	}
	started := time.Now()
	sum, st, err := ld.readDevice(cand, buf)
	if err != nil || changed(&cand.st, &st) {
		return verify.Sum{}, st, started, false
	}
	e.count(func(s *Summary) { s.BytesHashed += st.Size })
	if e.cache == nil {
		return sum, st, started, true
	}
	pol := cand.dir.side.policy
	vol := e.fs.volumeOf(cand.d, cand.st.Dev)
	key := cand.dir.side.key(cand.rel)
	r := e.cache.Lookup([]string{key})
	// A counterpart marked rotten (by an earlier run) is judged by its
	// stat and recorded digest as any other: named again while rotten.
	if !r[0].Found || !r[0].Entry.Unmarked().Valid(fileState(&st, vol), pol) {
		return sum, st, started, true
	}
	ent := r[0].Entry
	if ent.Sum == sum {
		return sum, st, started, true
	}
	where := filepath.Join(cand.dir.d.Path(), filepath.FromSlash(cand.rel))
	e.scrub.rot(rel, fmt.Sprintf("%q: rotten on the device: --link-dest read bytes that are not the digest %s its hash-cache entry recorded, its stat unchanged; %q copied from the source instead of linked to it", where, verify.Hex(ent.Sum), rel))
	if !e.opt.DryRun {
		// Marked rotten, its recorded digest kept: never valid (verify
		// with the cache reads it), read first by a --scrub of its tree,
		// and named again by the next --link-dest to it.
		ent.ReadAt, ent.Rotten = 0, true
		e.cache.Put(key, ent)
	}
	return verify.Sum{}, st, started, false
}

// readDevice reads the counterpart for its digest past its cached pages,
// failing if it moved (as the decider reads a DEST file it may not trust
// the cache for).
func (ld *linkDests) readDevice(cand linkCand, buf []byte) (verify.Sum, fileio.Stat, error) {
	return ld.e.decide.hashDest(cand.d, cand.name, buf, true)
}

// sourceDigest is the source's digest: from its valid hash-cache entry,
// else read (and remembered, as any source read).
func (ld *linkDests) sourceDigest(c *chunk, en *entry, buf []byte) (verify.Sum, bool) {
	e := ld.e
	if en.st.Size == 0 {
		return verify.Bytes(nil), true
	}
	if en.cache != nil && en.cache.srcOK {
		e.count(func(s *Summary) { s.CacheHits++ })
		return en.cache.src, true
	}
	if e.cache != nil && en.srcKey != "" {
		pol := ld.srcPolicy(c.src.d, en.st.Dev)
		if r := e.cache.Lookup([]string{en.srcKey}); r[0].Found && r[0].Entry.Valid(fileState(&en.st, e.fs.knownVolume(en.st.Dev)), pol) && e.cachedExtras(en, r[0].Entry) {
			e.count(func(s *Summary) { s.CacheHits++ })
			return r[0].Entry.Sum, true
		}
	}
	started := time.Now()
	sum, err := e.dedupe.hashSource(c.src.d, en, buf)
	if err != nil {
		return verify.Sum{}, false
	}
	e.count(func(s *Summary) { s.BytesHashed += en.st.Size })
	e.record.rememberSource(en.srcKey, &en.st, sum, en.extra, started)
	return sum, true
}

// srcPolicy is the cache policy of the source filesystem dev (sd a
// directory on it), asked once per filesystem.
func (ld *linkDests) srcPolicy(sd *fileio.Dir, dev uint64) hashcache.Policy {
	if p, ok := ld.pols.Load(dev); ok {
		return p.(hashcache.Policy)
	}
	t, _ := fileio.FSType(sd.Path())
	p := hashcache.PolicyFor(t)
	ld.pols.Store(dev, p)
	return p
}

// sameXattrs compares the extended attributes the copy of en would get
// with those the counterpart carries.
func (ld *linkDests) sameXattrs(c *chunk, en *entry, cand linkCand) bool {
	root := ld.e.root
	return meta.SameXattrs(c.src.d, en.name, ld.e.opt.Dereference, cand.d, cand.name, func(k string) bool {
		return root || strings.HasPrefix(k, "user.") || strings.HasPrefix(k, "system.posix_acl_")
	})
}

// destDev is the filesystem of the destination directory of c.
func (ld *linkDests) destDev(c *chunk) uint64 {
	if c.dst != nil && c.dst.devOK {
		return c.dst.dev
	}
	return ld.rootFS
}

// link makes en's name a hard link to the counterpart whose digest was
// established with stat est: a link under the temporary name, checked to
// lead to that inode, unchanged and not written since, then renamed onto
// the name. A link refused for being out of links (EMLINK) or across
// filesystems (EXDEV) is returned as err, and the file is copied.
func (ld *linkDests) link(c *chunk, en *entry, rel string, cand linkCand, est fileio.Stat, sum verify.Sum, readAt time.Time) (done, linked bool, err error) {
	e := ld.e
	dd := c.dst.d
	n, err := cand.d.OpenNode(cand.name)
	if err != nil {
		return false, false, nil
	}
	defer n.Close()
	written, watched := n.WatchWrites()
	wrote := func() bool { return watched && written() }
	if before, err := n.Restat(); err != nil || changed(&est, &before) {
		wrote()
		return false, false, nil
	}
	if en.resume {
		e.copier.removeKept(c.dst, en.tempName()) // linked instead: a leftover
	}
	tmp := en.tempName()
	e.clearLeftover(dd, c.dst.rel, tmp)
	want := devIno{est.Dev, est.Ino}
	e.made.before(c.dst.rel, tmp, false)
	err = linkChecked(dd, tmp, cand.d, cand.name, want)
	e.made.after(dd, c.dst.rel, tmp, nil, err)
	if err != nil {
		wrote()
		switch {
		case errors.Is(err, errLinkReplaced):
			return false, false, nil
		case errors.Is(err, syscall.EMLINK):
			return false, false, fmt.Errorf("%q has as many hard links as its filesystem allows: %w", filepath.Join(cand.dir.d.Path(), filepath.FromSlash(cand.rel)), err)
		case errors.Is(err, syscall.EXDEV) || fileio.IsFallback(err) || fileio.IsPermission(err):
			return false, false, err
		}
		return false, false, err
	}
	after, err := dd.Lstat(tmp)
	if wrote() || err != nil || after.Size != est.Size || after.Mtime != est.Mtime {
		_ = dd.Remove(tmp) // written meanwhile: what was established is gone
		return false, false, nil
	}
	if err := dd.Rename(tmp, dd, en.dstName); err != nil {
		_ = dd.Remove(tmp)
		ld.failed(en, rel, err)
		return true, true, nil
	}
	cur, err := dd.Lstat(en.dstName)
	if err != nil || (devIno{cur.Dev, cur.Ino}) != want {
		ld.failed(en, rel, &MismatchError{Path: rel, Cause: fmt.Sprintf("%q was replaced by another file as it took its name; rerun", en.dstName)})
		return true, true, nil
	}
	ld.report(c, en, rel, sum, cur, &cur, readAt)
	return true, true, nil
}

// report counts en as linked to its counterpart (inode of st), whose
// bytes were read from the device at readAt: its further names link to
// it, and its destination entry is stored once the run's final flush made
// the link durable (placed, nil in a dry run).
//
// Under --move its source is then removed like that of any copy (mover):
// the link is a copy in DEST whose bytes were read from the device and
// found to hold the source's digest before it took the name, and the
// mover checks the source is still the file that digest is of.
func (ld *linkDests) report(c *chunk, en *entry, rel string, sum verify.Sum, st fileio.Stat, placed *fileio.Stat, readAt time.Time) {
	e := ld.e
	if placed != nil && e.cache != nil && st.Size > 0 {
		e.record.rememberDestLater(e.dstSide.key(rel), placed, sum, time.Now(), deviceRead(readAt))
	}
	mv := e.mover.item(c.src, en, rel) // --move: noted once placed
	mv.sum = sum
	if en.group != nil {
		en.group.ok, en.group.sum, en.group.ino = true, sum, devIno{st.Dev, st.Ino}
		en.group.extra = en.extra
		close(en.group.done)
	}
	e.staged.report(c.stage, rel, func() {
		e.done(ActLinkDest, rel, en.st.Size, func(s *Summary) { s.LinkDest++ })
		e.recordSum(rel, sum, en.extra)
		e.mover.addItem(mv)
	})
}

// failed reports en as failed; its further names then fail too.
func (ld *linkDests) failed(en *entry, rel string, err error) {
	if en.group != nil {
		close(en.group.done)
	}
	ld.e.fail(rel, err)
}
