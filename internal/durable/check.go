package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Verify checks t (Check). On a mismatch it has again write the file once
// more (again closes what t kept and answers the new temporary), flushes
// just that copy (SyncFile) and checks it once more; a second mismatch is
// reported as the first, naming t.Path.
func (c *Config) Verify(t Temp, buf []byte, again func() (Temp, error)) error {
	err := c.Check(t, buf)
	mm, ok := err.(*refusal.Mismatch)
	if !ok {
		return err
	}
	nt, err := again()
	if err == nil {
		err = SyncFile(nt.Dir, nt.Name)
	}
	if err == nil {
		err = c.Check(nt, buf)
	}
	if _, twice := err.(*refusal.Mismatch); twice {
		mm.Path = t.Path
		err = mm
	}
	return err
}

// Check hashes the temporary (ReadBack) unless it was read back as it was
// written (t.Checked), and gives it its source's times last, since the
// read may have moved its access time. The inode read back is left open
// in t.Kept.
func (c *Config) Check(t Temp, buf []byte) error {
	if !t.Checked {
		at, err := c.ReadBack(t, buf)
		if !at.IsZero() {
			*t.ReadAt = at
		}
		if err != nil {
			return err
		}
	}
	if t.Linked {
		return nil // the inode is shared: its times are the target's, already equal
	}
	return c.SetTimes(t.Kept.Held(), t.Dir, t.Name, t.Src)
}

// SetTimes gives the copy open as f (name in dd) its source's times:
// through the descriptor, so that they land on the inode that was read
// back, where the platform keeps nanoseconds that way (Linux: futimens);
// elsewhere by name, relative to the directory (utimensat), the check of
// the final name after the rename (Placed) catching a swap.
func (c *Config) SetTimes(f *fileio.File, dd *fileio.Dir, name string, st *fileio.Stat) error {
	if runtime.GOOS == "linux" {
		return f.SetTimes(st.Atime, st.Mtime)
	}
	if err := fileio.Lutimes(dd, name, st.Atime, st.Mtime); err != nil {
		return err
	}
	c.KeepBtime(dd, name, st)
	return nil
}

// Placed checks that name, t's final name in t.Dir, leads to the inode
// that was read back (t.Kept.Held()) and returns that inode's stat, taken
// after the rename (which may move its ctime). Where the inode written is
// known (t.Dev and t.Ino: the read-back checked the inode held against
// it), the lookup of the name is that stat: it is of the same inode, which
// t.Kept keeps from being reused, so no fstat of it is needed.
func (c *Config) Placed(t Temp, name string) (fileio.Stat, error) {
	dev, ino := t.Dev, t.Ino
	if dev == 0 && ino == 0 {
		held, err := t.Kept.Held().Stat()
		if err != nil {
			return held, err
		}
		dev, ino = held.Dev, held.Ino
	}
	cur, err := t.Dir.Lstat(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Not an answer about the name (a driver that died answers
		// ENOTCONN): the caller's drive check decides what it means.
		return cur, err
	}
	if err != nil || cur.Dev != dev || cur.Ino != ino {
		return cur, &refusal.Mismatch{Path: t.Path, Cause: fmt.Sprintf("%q was replaced by another file after it was read back; the file under that name was not verified", name)}
	}
	if !t.Linked && !hashcache.SameTime(cur.Mtime, t.Src.Mtime, c.Res(cur.Dev)) {
		// fusefat gives a renamed file the time of the rename: set the
		// source's again, through the descriptor of the inode verified,
		// or every rerun would take the file for changed and copy it.
		if err := c.SetTimes(t.Kept.Held(), t.Dir, name, t.Src); err != nil {
			return cur, err
		}
		return t.Kept.Held().Stat()
	}
	return cur, nil
}
