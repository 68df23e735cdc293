package copyengine

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
)

// owner returns the uid and gid to set on a copy of st (-1 = leave as
// created), and whether the ownership of the source is kept in full. As
// root both are kept; otherwise the group is kept when the process is a
// member of it, as cp -a does.
func (e *engine) owner(st *fileio.Stat) (uid, gid int, kept bool) {
	if e.root {
		return int(st.Uid), int(st.Gid), true
	}
	uid, gid = -1, -1
	// The process's own group is set too: a new file takes the group of a
	// setgid directory it is made in, not the process's.
	if e.groups[st.Gid] {
		gid = int(st.Gid)
	}
	kept = st.Uid == uint32(e.euid) && gid >= 0
	return uid, gid, kept
}

// mode returns the permission bits for a copy of st: setuid and setgid are
// dropped when the ownership could not be kept, so no one gains a
// privileged program by copying it.
func mode(st *fileio.Stat, ownerKept bool) uint32 {
	m := st.Mode & 0o7777
	if !ownerKept {
		m &^= fileio.ModeSetuid | fileio.ModeSetgid
	}
	return m
}

// born says which of a new file's attributes its creation already made
// right (see createMode), so that applyMeta need not set them.
type born struct{ owner, mode bool }

// createMode returns the permission bits to create the copy of st in dd
// with, and which of its owner and mode creation gets right by itself: the
// owner when the process (and dd's group rule) gives the wanted one; the
// mode as well when it is plain permission bits the umask leaves alone, dd
// has no default ACL, and the mode does not stop the rest of applyMeta. On
// many small files each attribute set is a system call and an inode update
// per file. Otherwise the file is created 0600 and applyMeta sets the rest.
//
// While its data is written a temporary is thus readable by no one who may
// not read the finished copy: it has the copy's own owner and mode, or
// 0600. A setuid or setgid program never exists half-written.
func (e *engine) createMode(dd *fileio.Dir, st *fileio.Stat) (uint32, born) {
	in := dd.Inherit()
	if !in.Known {
		return 0o600, born{}
	}
	uid, gid, kept := e.owner(st)
	b := born{owner: (uid < 0 || uid == e.euid) && (gid < 0 || uint32(gid) == in.Gid)}
	want := mode(st, kept)
	// Without root, user.* attributes are set before the mode and need the
	// owner's write permission, and the read-back needs read permission.
	if b.owner && e.umaskKnown && !in.DefaultACL && want&^0o777 == 0 && want&e.umask == 0 && (e.root || want&0o600 == 0o600) {
		b.mode = true
		return want, b
	}
	return 0o600, b
}

// applyMeta gives the open copy f the owner, mode and extended attributes of
// the source (srcF may be nil when the source is not open), leaving out what
// its creation already made right (b). made, when not nil, is f's stat
// right after its creation, which shows a mode given then. Times are set
// separately, last, because a read-back could move the access time.
func (e *engine) applyMeta(f, srcF *fileio.File, st *fileio.Stat, b born, made *fileio.Stat) error {
	uid, gid, kept := e.owner(st)
	if (uid >= 0 || gid >= 0) && !b.owner {
		if err := f.Chown(uid, gid); err != nil {
			if e.root && !e.fs.cannotKeep(lostOwners, err) {
				return fmt.Errorf("setting owner: %w", err)
			}
			kept = false
		}
	}
	// Attributes before the mode: setting a user.* attribute needs write
	// permission, which a read-only mode would take away from a non-root
	// copier (and after the owner: chown drops security.capability).
	if srcF != nil {
		if err := fileio.CopyXattrs(srcF, f, e.root); err != nil && !e.fs.cannotKeep(lostXattrs, err) {
			return fmt.Errorf("copying extended attributes: %w", err)
		}
	}
	want := mode(st, kept)
	if !b.mode {
		if err := f.Chmod(want); err != nil {
			if !e.fs.cannotKeep(lostModes, err) {
				return fmt.Errorf("setting mode: %w", err)
			}
			return nil
		}
	}
	// Whether set now or at its creation, the mode must show: a filesystem
	// that stores none (exFAT through FUSE) accepts it and keeps nothing.
	// A mode given at creation shows in made, the file's stat then.
	if b.mode && made != nil {
		e.fs.modeKept(made, want)
	} else if cur, err := f.Stat(); err == nil {
		e.fs.modeKept(&cur, want)
	}
	return nil
}

// metaWanted returns the owner and mode an unchanged destination entry
// should have, and whether they differ from what it has.
func (dc *decider) metaWanted(en *entry) (uid, gid int, wantMode uint32, needOwner, differs bool) {
	e := dc.e
	d, s := en.dstSt, &en.st
	uid, gid, kept := e.owner(s)
	wantMode = mode(s, kept)
	needOwner = (uid >= 0 && d.Uid != uint32(uid)) || (gid >= 0 && d.Gid != uint32(gid))
	// Where modes do not stick, the mode shown is the driver's: a chmod
	// changes nothing, and a hard link replaced for it comes back the same.
	modeDiffers := d.Mode&0o7777 != wantMode && !e.fs.modesLost(d.Dev)
	return uid, gid, wantMode, needOwner, needOwner || modeDiffers
}

// fixMeta brings the mode and owner of an unchanged destination file up to
// date without touching its data. The changes go through a descriptor of
// the inode the walk found (fileio.Node), never through its name, which a
// writer of the destination could swap for a symlink meanwhile.
func (dc *decider) fixMeta(dst *handle, en *entry) {
	e := dc.e
	if en.st.IsSymlink() {
		return
	}
	if e.opt.DryRun {
		dc.wouldFixMeta(en)
		return
	}
	uid, gid, wantMode, needOwner, differs := dc.metaWanted(en)
	if !differs {
		return
	}
	rel := joinRel(dst.rel, en.dstName)
	n, err := dst.d.OpenNode(en.dstName)
	if err != nil {
		e.fail(rel, err)
		return
	}
	defer n.Close()
	if st := n.Stat(); st.Dev != en.dstSt.Dev || st.Ino != en.dstSt.Ino || st.Type() != en.dstSt.Type() {
		e.fail(rel, errDestReplaced)
		return
	}
	if needOwner {
		if err := n.Chown(uid, gid); err != nil {
			if !e.fs.cannotKeep(lostOwners, err) {
				e.fail(rel, err)
			}
			return
		}
	}
	if err := n.Chmod(wantMode); err != nil {
		if !e.fs.cannotKeep(lostModes, err) {
			e.fail(rel, err)
		}
		return
	}
	if st, err := n.Restat(); err == nil && st.Mode&0o7777 != wantMode {
		e.fs.modeKept(&st, wantMode)
		if !needOwner {
			return // the filesystem cannot hold modes (exFAT, FAT): nothing was updated
		}
	}
	en.fixed = true // reported with the skip
}

// errDestReplaced is the failure of a metadata change whose destination
// entry was replaced by another object between the look and the change.
var errDestReplaced = errors.New("the destination entry was replaced while its metadata was being set; rerun")

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
	if sd, err := e.walker.openSrcDir(dirWork{root: &rootSpec{srcDir: dm.srcRoot}, srcRel: dm.srcRel}); err == nil {
		defer sd.Close()
		srcF = sd.AsFile()
	}
	f := dd.AsFile()
	if err := e.applyMeta(f, srcF, &dm.st, born{}, nil); err != nil {
		return err
	}
	return f.SetTimes(dm.st.Atime, dm.st.Mtime)
}

// linkFollowers makes every further name of a source inode a hard link to
// the first name's copy, once that copy is in place.
func (dp *deduper) linkFollowers() {
	e := dp.e
	if e.opt.DryRun {
		for _, f := range dp.followers {
			if err := dp.wouldLink(f); err != nil {
				e.fail(f.rel, err)
			}
		}
		return
	}
	for _, f := range dp.followers {
		if e.ctx.Err() != nil || e.drives.halted() {
			return
		}
		if err := dp.linkOne(f); err != nil {
			e.fail(f.rel, err)
		}
		f.stage.settle()
	}
}

func (dp *deduper) linkOne(f linkFollower) error {
	e := dp.e
	if err := f.group.leaderErr(); err != nil {
		return err
	}
	ldir, lname := splitRel(f.group.leaderRel)
	fdir, fname := splitRel(f.rel)
	ld, err := e.staged.openDst(ldir)
	if err != nil {
		return err
	}
	defer ld.Close()
	fd, err := e.staged.openDst(fdir)
	if err != nil {
		return err
	}
	defer fd.Close()
	// The leader's name is linked only while it holds the inode that was
	// verified (or found unchanged): a writer of the destination may have
	// put another file there since, one outside the destination even.
	want := f.group.ino
	lst, err := ld.Lstat(lname)
	if err != nil {
		return err
	}
	if want == (devIno{}) {
		want = devIno{lst.Dev, lst.Ino} // not known: as before the checks
	}
	replaced := &MismatchError{Path: f.rel, Cause: fmt.Sprintf("hard link to %q: %v", f.group.leaderRel, errLinkReplaced)}
	if (devIno{lst.Dev, lst.Ino}) != want {
		return replaced
	}
	cur, err := fd.Lstat(fname)
	if err == nil && (devIno{cur.Dev, cur.Ino}) == want {
		o := skipOutcome(f.rel, f.st.Size, false, f.group.sum)
		o.Extra, o.Listed = f.group.extra, true // another name of the leader's inode
		e.report(o)
		e.mover.Note(f.mv, f.group.sum)
		return nil
	}
	if f.clash != nil && !fileio.IsNotExist(err) {
		return f.clash // held under another spelling, and another file: see respelled
	}
	tmp := tempName(fname)
	if f.tmp != "" {
		tmp = f.tmp
	}
	e.clearLeftover(fd, fdir, tmp)
	e.made.Before(fdir, tmp, false)
	err = linkChecked(fd, tmp, ld, lname, want)
	e.made.After(fd, fdir, tmp, nil, err)
	if err != nil {
		if errors.Is(err, errLinkReplaced) {
			return replaced
		}
		return err
	}
	if err := e.backups.beforeReplace(fd, fname, f.rel); err != nil {
		_ = fd.Remove(tmp)
		return fmt.Errorf("--backup-dir: keeping the version it replaces: %w", err)
	}
	if err := fd.Rename(tmp, fd, fname); err != nil {
		_ = fd.Remove(tmp)
		return err
	}
	if cur, err := fd.Lstat(fname); err != nil || (devIno{cur.Dev, cur.Ino}) != want {
		return &MismatchError{Path: f.rel, Cause: fmt.Sprintf("hard link %q was replaced by another file as it took its name; rerun", fname)}
	}
	e.staged.report(f.stage, f.rel, func() {
		e.report(&outcome.Outcome{Kind: outcome.Linked, Action: string(ActLink), Path: f.rel, Size: f.st.Size, Sum: f.group.sum,
			Extra: f.group.extra, Listed: true}) // another name of the leader's inode
		e.mover.Note(f.mv, f.group.sum)
	})
	return nil
}

// errLinkReplaced says a name to be hard-linked no longer leads to the
// inode that was verified.
var errLinkReplaced = errors.New("the name was replaced by another file since its copy was verified; rerun")

// linkChecked makes tmp in dd a hard link to name in od and checks that it
// leads to want, the inode the caller verified: linkat names what it
// links, and a writer of the destination can put another file under that
// name (one outside the destination, hard-linked in) at any moment. A
// link to anything else is removed, and errLinkReplaced returned.
func linkChecked(dd *fileio.Dir, tmp string, od *fileio.Dir, name string, want devIno) error {
	if err := dd.Link(od, name, tmp); err != nil {
		return err
	}
	if st, err := dd.Lstat(tmp); err != nil || (devIno{st.Dev, st.Ino}) != want {
		_ = dd.Remove(tmp)
		return errLinkReplaced
	}
	return nil
}

func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
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
		sameMtime(cur.Mtime, s.Mtime, e.fs.knownResolution(cur.Dev))
}
