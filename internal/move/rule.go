package move

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// errSourceChanged is the cause of a source kept because it no longer
// holds what was copied.
var errSourceChanged = errors.New("changed since it was copied; kept (rerun to copy and move it)")

// proven is --move's removal rule: it returns nil when the source entry
// cur (just lstat'ed in d) may be removed, and why it is kept otherwise.
// The proof is of identity and content, never of a name: cur is the
// inode, type, size and mtime its copy was made from, with the same
// change time where its filesystem keeps one (pol), or, where it keeps
// none (FAT, exFAT, NTFS, FUSE), a regular file that reads back to the
// digest its copy was verified with; and its copy in DEST is not that
// very inode (a source directory bind-mounted inside DEST is its own
// "copy").
//
// Where the filesystem keeps no inode number that lasts (pol.CheckInode
// is false: exfat-fuse and fusefat number an inode afresh each time the
// kernel has forgotten it, which memory pressure does at any time), the
// number is no identity: a source file is then what was copied when it
// is of the same filesystem, type, size and mtime and reads back to its
// copy's digest, whatever number it has now; any other entry (a symlink)
// must still have the number it had, or it is kept.
//
// A source that passes is still kept when its copy lacks its extended
// attributes or ACLs (fileMetaLost): that is not a question of which file
// it is.
func (j *Journal) proven(d *fileio.Dir, dst *destLook, it Item, cur *fileio.Stat, pol *hashcache.Policy) error {
	ctime, checkCtime := it.st.Ctime, pol.CheckCtime
	if c, ok := j.ctimes[devIno{cur.Dev, cur.Ino}]; ok {
		// This run removed another name of the inode, which moved its
		// change time: compare with the one it had after that.
		ctime, checkCtime = c, checkCtime && c >= 0
	}
	byContent := !pol.CheckCtime || !pol.CheckInode // read again: its stat cannot tell
	checkIno := pol.CheckInode || !cur.IsRegular()
	if cur.Dev != it.st.Dev || (checkIno && cur.Ino != it.st.Ino) || cur.Type() != it.st.Type() || cur.Size != it.st.Size || cur.Mtime != it.st.Mtime ||
		(checkCtime && cur.Ctime != ctime) {
		return fmt.Errorf("--move: the source %q %w", it.name, errSourceChanged)
	}
	if j.cfg.dry() {
		return nil // no copy was made to check
	}
	cp, err := dst.lstat(it.rel)
	if err != nil {
		return fmt.Errorf("--move: source kept: its copy cannot be checked: %w", err)
	}
	if cp.Dev == cur.Dev && cp.Ino == cur.Ino {
		return fmt.Errorf("--move: source kept: its copy in the destination is the source itself (the same inode: the source mounted inside the destination?)")
	}
	if !byContent || !cur.IsRegular() {
		return nil
	}
	// No change time to tell a rewrite whose mtime was put back, or no
	// inode number to tell another file: read it again.
	if it.sum == (verify.Sum{}) {
		return fmt.Errorf("--move: source kept: its filesystem keeps no change time or no lasting inode number, and no digest of its copy is known to check it against; rerun")
	}
	f, err := d.Open(it.name, false)
	if err != nil {
		return fmt.Errorf("--move: source kept: reading it again: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || (pol.CheckInode && st.Ino != cur.Ino) || st.Dev != cur.Dev || st.Size != cur.Size || st.Mtime != cur.Mtime {
		return fmt.Errorf("--move: the source %q %w", it.name, errSourceChanged)
	}
	got, n, err := verify.HashFile(f, cur.Size, false, make([]byte, 1<<20))
	if err != nil {
		return fmt.Errorf("--move: source kept: reading it again: %w", err)
	}
	j.cfg.Hashed(n)
	if n != cur.Size || got != it.sum {
		return fmt.Errorf("--move: the source %q %w (its content differs from the copy's)", it.name, errSourceChanged)
	}
	return nil
}

// The kinds of metadata whose loss keeps a source, as the run's summary
// names them.
const (
	lostXattrs = "extended attributes"
	lostACLs   = "POSIX ACLs"
)

// fileMetaLost returns the kind of metadata (lostXattrs, lostACLs) the
// regular source file it (cur, in d) holds and its copy in DEST lacks, or
// "": such a source is kept, since removing it would lose that metadata
// for good. The copy is read, not this run's record of refusals: a rerun
// that finds the copy unchanged sets no attribute and meets no refusal,
// and an attribute one entry's copy could not take (too large for it)
// says nothing of another's.
func (j *Journal) fileMetaLost(d *fileio.Dir, dst *destLook, it Item, cur *fileio.Stat) string {
	if !cur.IsRegular() {
		return ""
	}
	f, err := d.Open(it.name, false)
	if err != nil {
		return lostXattrs // cannot tell: keep it
	}
	defer f.Close()
	return j.metaLost(f, func() (*fileio.File, error) { return dst.open(it.rel) })
}

// dirMetaLost reports whether the source directory dm, now empty, holds
// metadata its copy in DEST lacks (metaLost): it is then kept and counted
// as a source kept, since removing it would lose that metadata. One that
// is not empty is not looked at: removeDirs leaves it anyway.
func (j *Journal) dirMetaLost(root *fileio.Dir, dm Dir) bool {
	sd, err := root.OpenBeneath(dm.SrcRel)
	if err != nil {
		return false // removeDirs cannot open it either
	}
	defer sd.Close()
	if names, err := sd.ReadDir(); err != nil || len(names) > 0 {
		return false
	}
	kind := j.metaLost(sd.AsFile(), func() (*fileio.File, error) {
		_, dstRoot := j.cfg.Dest()
		if dstRoot == nil {
			return nil, fmt.Errorf("no destination open")
		}
		dd, err := dstRoot.OpenBeneath(dm.DstRel)
		if err != nil {
			return nil, err
		}
		return dd.AsFile(), nil // closed as a File: the descriptor is the directory's
	})
	if kind == "" {
		return false
	}
	j.mu.Lock()
	j.metaKept[kind]++
	j.mu.Unlock()
	return true
}

// metaLost returns the kind of metadata (lostXattrs, lostACLs) the source
// src holds and its copy (opened by openCopy, only when src has any) does
// not hold with the same value, or "". The attributes looked at are those
// a copy takes (all of them as root, else the user namespace and the
// ACLs), but for the SELinux label, which the destination's policy gives
// its files. What cannot be read counts as lost: the source is kept.
func (j *Journal) metaLost(src *fileio.File, openCopy func() (*fileio.File, error)) string {
	attrs, err := fileio.Xattrs(src)
	if err != nil {
		return lostXattrs
	}
	var copied map[string][]byte
	for n, v := range attrs {
		kind := lostXattrs
		if strings.HasPrefix(n, "system.posix_acl_") {
			kind = lostACLs
		}
		if n == "security.selinux" || (!j.cfg.AllXattrs && kind == lostXattrs && !strings.HasPrefix(n, "user.")) {
			continue
		}
		if copied == nil {
			cp, err := openCopy()
			if err != nil {
				return lostXattrs
			}
			copied, err = fileio.Xattrs(cp)
			cp.Close()
			if err != nil {
				return lostXattrs
			}
			if copied == nil {
				copied = map[string][]byte{} // a filesystem without attributes
			}
		}
		if w, ok := copied[n]; !ok || !bytes.Equal(v, w) {
			return kind
		}
	}
	return ""
}

// remove unlinks the source name of d, which cur is. Unlinking one name
// of an inode with several changes its change time: the one it has after
// is kept in j.ctimes (-1 when it cannot be had), for the checks of its
// other names.
func (j *Journal) remove(d *fileio.Dir, name string, cur *fileio.Stat) error {
	if cur.Nlink < 2 || !cur.IsRegular() {
		return d.Remove(name)
	}
	k := devIno{cur.Dev, cur.Ino}
	if j.ctimes == nil {
		j.ctimes = map[devIno]int64{}
	}
	j.ctimes[k] = -1
	f, err := d.Open(name, false)
	if err != nil {
		return d.Remove(name)
	}
	defer f.Close()
	st, err := f.Stat()
	same := err == nil && st.Dev == cur.Dev && st.Ino == cur.Ino
	if err := d.Remove(name); err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && same {
		j.ctimes[k] = st.Ctime
	}
	return nil
}

// destLook looks up the copies of the sources in DEST: each directory is
// opened beneath DEST's root without following symlinks (the last one is
// kept open, the sources being removed in order of their directories).
type destLook struct {
	root     string
	rootDir  *fileio.Dir
	borrowed bool // rootDir is the run's own destination root: not closed here
	dir      *fileio.Dir
	dirRel   string
}

// open opens the destination file rel, the one lstat finds there.
func (md *destLook) open(rel string) (*fileio.File, error) {
	want, err := md.lstat(rel)
	if err != nil {
		return nil, err
	}
	f, err := md.dir.Open(path.Base(rel), false)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || st.Dev != want.Dev || st.Ino != want.Ino {
		f.Close()
		return nil, fmt.Errorf("%q was replaced as it was opened", rel)
	}
	return f, nil
}

// lstat returns the stat of the destination entry rel.
func (md *destLook) lstat(rel string) (fileio.Stat, error) {
	if md.rootDir == nil {
		r, err := fileio.OpenDir(md.root)
		if err != nil {
			return fileio.Stat{}, err
		}
		md.rootDir = r
	}
	parent, name := parentRel(rel), path.Base(rel)
	if md.dir == nil || md.dirRel != parent {
		if md.dir != nil && md.dir != md.rootDir {
			md.dir.Close()
		}
		md.dir = nil
		if parent == "" {
			md.dir = md.rootDir
		} else {
			sub, err := md.rootDir.OpenBeneath(parent)
			if err != nil {
				return fileio.Stat{}, err
			}
			md.dir = sub
		}
		md.dirRel = parent
	}
	return md.dir.Lstat(name)
}

func (md *destLook) close() {
	if md.dir != nil && md.dir != md.rootDir {
		md.dir.Close()
	}
	if md.rootDir != nil && !md.borrowed {
		md.rootDir.Close()
	}
}
