package transfer

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/meta"
)

// Special is a symlink, FIFO, socket or device to make like its source.
type Special struct {
	SrcDir  *fileio.Dir // the source's directory
	Name    string      // the source's name in it
	Stat    fileio.Stat // the source's stat
	Dir     *fileio.Dir // the destination directory
	DirRel  string      // its path below the destination root
	Tmp     string      // the temporary name it is made under
	DstName string      // its final name
	// Create makes the entry under the name tmp in Dir.
	Create func(tmp string) error
}

// MakeSpecial creates s under its temporary name with s.Create, gives it
// the source's owner, extended attributes, mode and times, and renames it
// into place. These hold no data, so they need no read-back.
//
// The temporary's name is predictable, so a writer of the destination can
// swap it for a symlink to a file elsewhere, or for a hard link to one. The
// new entry is therefore held by a descriptor (fileio.Node; a symlink's
// opened as the symlink itself) from right after its creation, and its
// metadata is set through that. What is held must be of the source's type
// and have one link: an object made a moment ago by mknod or symlink has
// no other name, while a hard link to something outside the destination
// has two or more. After the rename the final name must lead to the held
// object, still with one link, or the entry fails (meta.ErrReplaced).
func (c *Config) MakeSpecial(s *Special) error {
	dd, tmp := s.Dir, s.Tmp
	c.Made.Clear(dd, s.DirRel, tmp)
	c.Made.Before(s.DirRel, tmp, false)
	if err := s.Create(tmp); err != nil {
		c.Made.After(dd, s.DirRel, tmp, nil, err)
		if fileio.IsExist(err) {
			return made.Taken(tmp, err)
		}
		return err
	}
	c.Made.After(dd, s.DirRel, tmp, nil, nil)
	var n *fileio.Node
	err := func() error {
		var err error
		if s.Stat.IsSymlink() {
			n, err = dd.OpenSymlinkNode(tmp)
		} else {
			n, err = dd.OpenNode(tmp)
		}
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EINVAL) {
			return meta.ErrReplaced // a symlink where a FIFO was made, or the reverse
		} else if err != nil {
			return err
		}
		if st := n.Stat(); st.Type() != s.Stat.Type() || st.Nlink != 1 {
			return meta.ErrReplaced
		}
		if err := c.specialMeta(s, n); err != nil {
			return err
		}
		if err := dd.Rename(tmp, dd, s.DstName); err != nil {
			return err
		}
		if cur, err := dd.Lstat(s.DstName); err != nil || cur.Dev != n.Stat().Dev || cur.Ino != n.Stat().Ino || cur.Nlink != 1 {
			return meta.ErrReplaced
		}
		return nil
	}()
	if n != nil {
		n.Close()
	}
	if err != nil {
		_ = dd.Remove(tmp)
	}
	return err
}

// specialMeta gives n, the entry made for s, its source's owner, extended
// attributes, mode (not a symlink's) and times.
func (c *Config) specialMeta(s *Special, n *fileio.Node) error {
	st := &s.Stat
	uid, gid, kept := c.Meta.Owner(st)
	if uid >= 0 || gid >= 0 {
		if err := n.Chown(uid, gid); err != nil && c.Meta.Root && !c.cannotKeep(meta.Owners, err) {
			return err
		} else if err != nil {
			kept = false
		}
	}
	if err := fileio.CopyXattrsToNode(s.SrcDir, s.Name, n, c.Deref, c.Meta.Root); err != nil && !c.cannotKeep(meta.Xattrs, err) {
		return fmt.Errorf("copying extended attributes: %w", err)
	}
	if !st.IsSymlink() {
		if err := n.Chmod(meta.Mode(st, kept)); err != nil && !c.cannotKeep(meta.Modes, err) {
			return err
		}
	}
	return n.SetTimes(st.Atime, st.Mtime)
}
