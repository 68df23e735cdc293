package copyengine

import (
	"errors"
	"fmt"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/linkdest"
)

// linkFollowers makes every further name of a source inode a hard link to
// the first name's copy, once that copy is in place.
func (dp *deduper) linkFollowers() {
	e := dp.e
	if e.skipWrite() {
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
		return err
	}
	if err := fd.Rename(tmp, fd, fname); err != nil {
		_ = fd.Remove(tmp)
		return err
	}
	if cur, err := fd.Lstat(fname); err != nil || (devIno{cur.Dev, cur.Ino}) != want {
		return &MismatchError{Path: f.rel, Cause: fmt.Sprintf("hard link %q was replaced by another file as it took its name; rerun", fname)}
	}
	e.staged.report(f.stage, f.rel, func() {
		e.report(&outcome.Outcome{Kind: outcome.Linked, Action: ActLink, Path: f.rel, Size: f.st.Size, Sum: f.group.sum,
			Extra: f.group.extra, Listed: true}) // another name of the leader's inode
		e.mover.Note(f.mv, f.group.sum)
	})
	return nil
}

// errLinkReplaced says a name to be hard-linked no longer leads to the
// inode that was verified (linkdest.ErrReplaced).
var errLinkReplaced = linkdest.ErrReplaced

// linkChecked makes tmp in dd a hard link to name in od and checks that it
// leads to want, the inode the caller verified (linkdest.LinkChecked): a
// link to anything else is removed, and errLinkReplaced returned.
func linkChecked(dd *fileio.Dir, tmp string, od *fileio.Dir, name string, want devIno) error {
	return linkdest.LinkChecked(dd, tmp, od, name, want.dev, want.ino)
}

func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}
