package follower

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/linkdest"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Recorder is the run's record of what it makes in the destination
// (destfs.Recorder: made.Record), told before and after a temporary is
// created so that a later run knows it for a leftover of fastcopy's own.
type Recorder = destfs.Recorder

// Config is what Link needs of the run; it is the whole contract.
type Config struct {
	// OpenDir opens a destination directory by its path relative to the
	// destination root (through the run's staged directories).
	OpenDir func(rel string) (*fileio.Dir, error)
	// ClearLeftover removes a leftover of an earlier run under the
	// temporary name in dir (dirRel), before it is taken.
	ClearLeftover func(dir *fileio.Dir, dirRel, name string)
	// Made records the temporary link before and after it is made.
	Made Recorder
	// BeforeReplace keeps what the follower's name holds before the link
	// replaces it (--backup-dir).
	BeforeReplace func(dir *fileio.Dir, name, rel string) error
}

// Ino is an inode: its device and number.
type Ino struct{ Dev, Ino uint64 }

func inoOf(st *fileio.Stat) Ino { return Ino{st.Dev, st.Ino} }

// Name is a follower to link.
type Name struct {
	Rel       string // the follower's destination path
	LeaderRel string // the leader's destination path
	// Want is the leader's inode as it was verified (or found unchanged);
	// zero when not known: the leader's name's inode as it is looked at.
	Want Ino
	// Tmp is the temporary name the link is made under, "" for the name's
	// destfs.TempName.
	Tmp string
	// Clash says the destination holds the name under another spelling,
	// and another file; nil when it does not.
	Clash error
	// Leader is where the leader's copy stands: a follower of one not in
	// place is not linked (Link and Would fail it).
	Leader Leader
}

// Link makes n.Rel a hard link to the leader's inode. linked is false,
// with a nil error, when the name leads to that inode already.
func (c Config) Link(n Name) (linked bool, err error) {
	if err := n.Leader.leaderErr(n.LeaderRel); err != nil {
		return false, err
	}
	ldir, lname := splitRel(n.LeaderRel)
	fdir, fname := splitRel(n.Rel)
	ld, err := c.OpenDir(ldir)
	if err != nil {
		return false, err
	}
	defer ld.Close()
	fd, err := c.OpenDir(fdir)
	if err != nil {
		return false, err
	}
	defer fd.Close()
	// The leader's name is linked only while it holds the inode that was
	// verified (or found unchanged): a writer of the destination may have
	// put another file there since, one outside the destination even.
	want := n.Want
	lst, err := ld.Lstat(lname)
	if err != nil {
		return false, err
	}
	if want == (Ino{}) {
		want = inoOf(&lst) // not known: as before the checks
	}
	replaced := &refusal.Mismatch{Path: n.Rel, Cause: fmt.Sprintf("hard link to %q: %v", n.LeaderRel, linkdest.ErrReplaced)}
	if inoOf(&lst) != want {
		return false, replaced
	}
	cur, err := fd.Lstat(fname)
	if err == nil && inoOf(&cur) == want {
		return false, nil
	}
	if n.Clash != nil && !fileio.IsNotExist(err) {
		return false, n.Clash // held under another spelling, and another file
	}
	tmp := n.Tmp
	if tmp == "" {
		tmp = destfs.TempName(fname)
	}
	c.ClearLeftover(fd, fdir, tmp)
	c.Made.Before(fdir, tmp, false)
	err = linkdest.LinkChecked(fd, tmp, ld, lname, want.Dev, want.Ino)
	c.Made.After(fd, fdir, tmp, nil, err)
	if err != nil {
		if errors.Is(err, linkdest.ErrReplaced) {
			return false, replaced
		}
		return false, err
	}
	if err := c.BeforeReplace(fd, fname, n.Rel); err != nil {
		_ = fd.Remove(tmp)
		return false, err // the failure names --backup-dir (BeforeReplace)
	}
	if err := fd.Rename(tmp, fd, fname); err != nil {
		_ = fd.Remove(tmp)
		return false, err
	}
	if cur, err := fd.Lstat(fname); err != nil || inoOf(&cur) != want {
		return false, &refusal.Mismatch{Path: n.Rel, Cause: fmt.Sprintf("hard link %q was replaced by another file as it took its name; rerun", fname)}
	}
	return true, nil
}

func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// Would is Link's judgement for a dry run, which writes nothing: linked is
// false when the name already leads to the leader's inode, known as
// verified (n.Want); otherwise the name would be linked, after what it
// holds is kept (BeforeReplace, which a dry run only counts), unless it is
// held under another spelling (n.Clash). root is DEST's root, nil where
// the run would make DEST; BeforeReplace may be nil (no --backup-dir).
func (c Config) Would(n Name, root *fileio.Dir) (linked bool, err error) {
	if err := n.Leader.leaderErr(n.LeaderRel); err != nil {
		return false, err
	}
	if root != nil {
		cur, err := root.Lstat(n.Rel)
		if err == nil && n.Want != (Ino{}) && inoOf(&cur) == n.Want {
			return false, nil
		}
		if err == nil && c.BeforeReplace != nil {
			// The name is replaced by the link: what it holds is kept
			// first (Link).
			dir, name := splitRel(n.Rel)
			if d, derr := c.OpenDir(dir); derr == nil {
				err = c.BeforeReplace(d, name, n.Rel)
				d.Close()
				if err != nil {
					return false, err // the failure names --backup-dir (BeforeReplace)
				}
			}
		}
	}
	if n.Clash != nil {
		return false, n.Clash
	}
	return true, nil
}
