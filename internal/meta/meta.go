package meta

import (
	"errors"
	"fmt"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Kind is a kind of metadata a destination may be unable to keep.
type Kind int

// The kinds Config.CannotKeep is asked about.
const (
	Owners Kind = iota
	Modes
	Xattrs
)

// Config is the whole of what the metadata of a copy depends on: who
// makes the copy, and how a refusal of the destination is told apart from
// a failure.
type Config struct {
	Root       bool            // running as root: owners and every attribute namespace
	Euid       int             // the process's effective uid
	Groups     map[uint32]bool // the process's groups
	Umask      uint32          // the process's umask, when UmaskKnown
	UmaskKnown bool
	// CannotKeep reports whether err, from setting metadata of kind on
	// the destination, means its filesystem cannot keep that kind (then
	// the caller records it and the entry does not fail). Nil: none is.
	CannotKeep func(kind Kind, err error) bool
	// ModeKept is told the stat of a destination file whose mode was set
	// to want without an error, to check that it shows. Nil: not checked.
	ModeKept func(st *fileio.Stat, want uint32)
	// ModesLost reports whether filesystem dev was found to keep no
	// permission bits (then Wanted does not compare modes). Nil: none.
	ModesLost func(dev uint64) bool
}

func (c *Config) cannotKeep(kind Kind, err error) bool {
	return c.CannotKeep != nil && c.CannotKeep(kind, err)
}

func (c *Config) modeKept(st *fileio.Stat, want uint32) {
	if c.ModeKept != nil {
		c.ModeKept(st, want)
	}
}

// ErrReplaced is the failure of a metadata change whose destination
// entry was replaced by another object between the look and the change.
var ErrReplaced = errors.New("the destination entry was replaced while its metadata was being set; rerun")

// Owner returns the uid and gid to set on a copy of st (-1 = leave as
// created), and whether the ownership of the source is kept in full. As
// root both are kept; otherwise the group is kept when the process is a
// member of it, as cp -a does.
func (c *Config) Owner(st *fileio.Stat) (uid, gid int, kept bool) {
	if c.Root {
		return int(st.Uid), int(st.Gid), true
	}
	uid, gid = -1, -1
	// The process's own group is set too: a new file takes the group of a
	// setgid directory it is made in, not the process's.
	if c.Groups[st.Gid] {
		gid = int(st.Gid)
	}
	kept = st.Uid == uint32(c.Euid) && gid >= 0
	return uid, gid, kept
}

// Mode returns the permission bits for a copy of st: setuid and setgid are
// dropped when the ownership could not be kept, so no one gains a
// privileged program by copying it.
func Mode(st *fileio.Stat, ownerKept bool) uint32 {
	m := st.Mode & 0o7777
	if !ownerKept {
		m &^= fileio.ModeSetuid | fileio.ModeSetgid
	}
	return m
}

// Born says which of a new file's attributes its creation already made
// right (see CreateMode), so that Apply need not set them.
type Born struct{ Owner, Mode bool }

// CreateMode returns the permission bits to create the copy of st in dd
// with, and which of its owner and mode creation gets right by itself: the
// owner when the process (and dd's group rule) gives the wanted one; the
// mode as well when it is plain permission bits the umask leaves alone, dd
// has no default ACL, and the mode does not stop the rest of Apply. On
// many small files each attribute set is a system call and an inode update
// per file. Otherwise the file is created 0600 and Apply sets the rest.
//
// While its data is written a temporary is thus readable by no one who may
// not read the finished copy: it has the copy's own owner and mode, or
// 0600. A setuid or setgid program never exists half-written.
func (c *Config) CreateMode(dd *fileio.Dir, st *fileio.Stat) (uint32, Born) {
	in := dd.Inherit()
	if !in.Known {
		return 0o600, Born{}
	}
	uid, gid, kept := c.Owner(st)
	b := Born{Owner: (uid < 0 || uid == c.Euid) && (gid < 0 || uint32(gid) == in.Gid)}
	want := Mode(st, kept)
	// Without root, user.* attributes are set before the mode and need the
	// owner's write permission, and the read-back needs read permission.
	if b.Owner && c.UmaskKnown && !in.DefaultACL && want&^0o777 == 0 && want&c.Umask == 0 && (c.Root || want&0o600 == 0o600) {
		b.Mode = true
		return want, b
	}
	return 0o600, b
}

// Apply gives the open copy f the owner, mode and extended attributes of
// the source (srcF may be nil when the source is not open), leaving out what
// its creation already made right (b). made, when not nil, is f's stat
// right after its creation, which shows a mode given then. Times are set
// separately, last, because a read-back could move the access time.
func (c *Config) Apply(f, srcF *fileio.File, st *fileio.Stat, b Born, made *fileio.Stat) error {
	uid, gid, kept := c.Owner(st)
	if (uid >= 0 || gid >= 0) && !b.Owner {
		if err := f.Chown(uid, gid); err != nil {
			if c.Root && !c.cannotKeep(Owners, err) {
				return fmt.Errorf("setting owner: %w", err)
			}
			kept = false
		}
	}
	// Attributes before the mode: setting a user.* attribute needs write
	// permission, which a read-only mode would take away from a non-root
	// copier (and after the owner: chown drops security.capability).
	if srcF != nil {
		if err := fileio.CopyXattrs(srcF, f, c.Root); err != nil && !c.cannotKeep(Xattrs, err) {
			return fmt.Errorf("copying extended attributes: %w", err)
		}
	}
	want := Mode(st, kept)
	if !b.Mode {
		if err := f.Chmod(want); err != nil {
			if !c.cannotKeep(Modes, err) {
				return fmt.Errorf("setting mode: %w", err)
			}
			return nil
		}
	}
	// Whether set now or at its creation, the mode must show: a filesystem
	// that stores none (exFAT through FUSE) accepts it and keeps nothing.
	// A mode given at creation shows in made, the file's stat then.
	if b.Mode && made != nil {
		c.modeKept(made, want)
	} else if cur, err := f.Stat(); err == nil {
		c.modeKept(&cur, want)
	}
	return nil
}

// Want is the owner and mode an unchanged destination entry should have.
type Want struct {
	Uid, Gid  int    // -1: left as it is
	Mode      uint32 // permission bits
	NeedOwner bool   // its owner or group is not the wanted one
	Differs   bool   // its owner or its mode is not the wanted one
}

// Wanted returns the owner and mode the destination entry dst, an
// unchanged copy of src, should have, and whether they differ from what it
// has.
func (c *Config) Wanted(dst, src *fileio.Stat) Want {
	uid, gid, kept := c.Owner(src)
	w := Want{Uid: uid, Gid: gid, Mode: Mode(src, kept)}
	w.NeedOwner = (uid >= 0 && dst.Uid != uint32(uid)) || (gid >= 0 && dst.Gid != uint32(gid))
	// Where modes do not stick, the mode shown is the driver's: a chmod
	// changes nothing, and a hard link replaced for it comes back the same.
	w.Differs = w.NeedOwner || (dst.Mode&0o7777 != w.Mode && !(c.ModesLost != nil && c.ModesLost(dst.Dev)))
	return w
}

// Fix brings the owner and mode of n, the opened destination entry the
// walk found with stat was, up to w without touching its data, and
// reports whether anything was updated. An n that is no longer the entry
// of was (another inode or type) is ErrReplaced; a kind the filesystem
// cannot keep stops the fix without an error.
func (c *Config) Fix(n *fileio.Node, was *fileio.Stat, w Want) (fixed bool, err error) {
	if st := n.Stat(); st.Dev != was.Dev || st.Ino != was.Ino || st.Type() != was.Type() {
		return false, ErrReplaced
	}
	if w.NeedOwner {
		if err := n.Chown(w.Uid, w.Gid); err != nil {
			if !c.cannotKeep(Owners, err) {
				return false, err
			}
			return false, nil
		}
	}
	if err := n.Chmod(w.Mode); err != nil {
		if !c.cannotKeep(Modes, err) {
			return false, err
		}
		return false, nil
	}
	if st, err := n.Restat(); err == nil && st.Mode&0o7777 != w.Mode {
		c.modeKept(&st, w.Mode)
		if !w.NeedOwner {
			return false, nil // the filesystem cannot hold modes (exFAT, FAT): nothing was updated
		}
	}
	return true, nil
}

// FixIn brings the owner and mode of name in d, an unchanged destination
// entry the walk found with stat dst (a copy of src), up to date without
// touching its data (Wanted, then Fix), and reports whether anything was
// updated. The changes go through a descriptor of the inode the walk found
// (fileio.Node), never through its name, which a writer of the
// destination could swap for a symlink meanwhile.
func (c *Config) FixIn(d *fileio.Dir, name string, dst, src *fileio.Stat) (fixed bool, err error) {
	w := c.Wanted(dst, src)
	if !w.Differs {
		return false, nil
	}
	n, err := d.OpenNode(name)
	if err != nil {
		return false, err
	}
	defer n.Close()
	return c.Fix(n, dst, w)
}
