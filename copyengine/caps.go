package copyengine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// fsInfo is what the run learns of the filesystems it reads and writes:
// what the destination can keep (here), and per filesystem its volume
// identity and time resolution (devinfo.go). The stages share it.
type fsInfo struct {
	e    *engine
	caps destCaps
	devs devInfos             // per filesystem: volume identity, time resolution
	lost map[string]*lostKind // what the destination could not keep (under e.mu)
}

// destCaps is what the destination's filesystem can keep, learned before
// the first byte it concerns is written, so that what it cannot keep is
// decided up front instead of failing file after file.
type destCaps struct {
	fsType  string // as fileio.FSType names it ("vfat", "fuseblk", ...), "" when unknown
	maxFile int64  // the largest file it holds, 0 for no limit a file could reach
	// noLinks: link(2) is refused, further names of a source inode are
	// copied separately. Decided once (linksOnce), when the first source
	// file with several names is met, so that a run without any never
	// touches the destination to find out.
	noLinks   bool
	linksOnce sync.Once
	probe     *fileio.Dir // where to probe; nil: do not write to find out (dry run)
	// seen holds the source inodes with several names met so far, when
	// noLinks: the first name is copied, the others are copied again.
	seen map[devIno]bool
	// further counts the names met after the first of a source inode, when
	// noLinks, whether copied or found unchanged by a rerun: separate files
	// either way.
	further int64
}

// probeCaps learns what the destination root d can keep from its type.
// With write, hard links may be tried there later (hasLinks).
func (fsi *fsInfo) probeCaps(d *fileio.Dir, write bool) {
	e := fsi.e
	fsi.caps.seen = map[devIno]bool{}
	if t, err := fileio.FSType(e.dstRootPath); err == nil {
		fsi.caps.fsType = t
	}
	fsi.caps.maxFile = maxFileSize(fsi.caps.fsType)
	if write {
		fsi.caps.probe = d
	}
}

// hasLinks reports whether the destination makes hard links. The type
// answers for the common filesystems; for others (FUSE's fuseblk is
// exfat-fuse or ntfs-3g) a link is tried in the root: a temporary and a
// second name for it, both removed, under temporaries' names (a leftover
// goes with the next run's cleanup). The root's times, which that moves,
// are put back at once (keepDirTimes).
func (fsi *fsInfo) hasLinks() bool {
	fsi.caps.linksOnce.Do(func() {
		switch fsi.caps.fsType {
		case "vfat", "msdos", "exfat", "fuse.fusefat", "fuse.exfat":
			fsi.caps.noLinks = true
		case "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "f2fs", "zfs", "bcachefs", "overlay", "ntfs3":
		default:
			fsi.caps.noLinks = fsi.caps.probe != nil && !linksWork(fsi.caps.probe)
		}
	})
	return !fsi.caps.noLinks
}

// tooLarge returns the error of a regular file the destination cannot hold,
// or nil: it is refused by name before any byte of it is written, instead
// of failing with EFBIG (or worse) when the write reaches the limit.
func (fsi *fsInfo) tooLarge(st *fileio.Stat) error {
	if fsi.caps.maxFile <= 0 || !st.IsRegular() || st.Size <= fsi.caps.maxFile {
		return nil
	}
	return fmt.Errorf("%w: %d bytes, and %s holds files of at most %d bytes (%s); not written",
		ErrTooLarge, st.Size, fsi.fsName(), fsi.caps.maxFile, HumanBytes(fsi.caps.maxFile))
}

// linksWork reports whether d's filesystem makes hard links: it makes a
// file and a second name for it. exFAT and FAT have no hard links
// (exfat-fuse and the kernel's vfat say EPERM, others ENOTSUP or ENOSYS).
// Any other failure says nothing about links and counts as "they work":
// the files then fail, or not, as they would without the probe.
func linksWork(d *fileio.Dir) bool {
	defer keepDirTimes(d)()
	a := tempName(fmt.Sprintf("fastcopy-link-probe-%d", os.Getpid()))
	b := tempName(fmt.Sprintf("fastcopy-link-probe-%d-2", os.Getpid()))
	f, err := d.CreateTemp(a)
	if err != nil {
		return true
	}
	f.Close()
	defer d.Remove(a)
	err = d.Link(d, a, b)
	if err == nil {
		_ = d.Remove(b)
		return true
	}
	return !(fileio.IsPermission(err) || fileio.IsFallback(err))
}

// fsName names the destination's filesystem in messages: by its mount
// point's path, with its type where known.
func (fsi *fsInfo) fsName() string {
	e := fsi.e
	if fsi.caps.fsType == "" {
		return fmt.Sprintf("the filesystem of %q", e.dstRootPath)
	}
	return fmt.Sprintf("the filesystem of %q (%s)", e.dstRootPath, fsi.caps.fsType)
}

// linkCopy reports whether en, a name of a source inode with several, is
// to be copied as a file of its own because the destination has no hard
// links: every name after the first one met.
func (fsi *fsInfo) linkCopy(st *fileio.Stat) bool {
	e := fsi.e
	k := devIno{st.Dev, st.Ino}
	e.mu.Lock()
	defer e.mu.Unlock()
	if fsi.caps.seen[k] {
		fsi.caps.further++
		return true
	}
	fsi.caps.seen[k] = true
	return false
}

// noteNotKept adds to the summary, once, what the destination could not
// keep.
func (fsi *fsInfo) noteNotKept() {
	e := fsi.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := e.sum.LinkCopies; n > 0 {
		e.sum.NotKept = append(e.sum.NotKept, fmt.Sprintf("hard links: %s has none; %d further names of linked source files were copied as separate verified files", fsi.fsName(), n))
	} else if n := fsi.caps.further; n > 0 {
		// A rerun that found them all in place: they are still not links.
		e.sum.NotKept = append(e.sum.NotKept, fmt.Sprintf("hard links: %s has none; %d further names of linked source files are separate files", fsi.fsName(), n))
	}
	for _, kind := range []string{lostSymlinks, lostOwners, lostModes, lostACLs, lostXattrs, lostBtimes} {
		l := fsi.lost[kind]
		if l == nil {
			continue
		}
		what := fmt.Sprintf("not kept on %d entries", l.n)
		if kind == lostSymlinks {
			what = fmt.Sprintf("%d not copied", l.n)
		}
		which := "them"
		if l.someOnly {
			which = "all of them"
		}
		e.sum.NotKept = append(e.sum.NotKept, fmt.Sprintf("%s: %s cannot keep %s (%s); %s", kind, fsi.fsName(), which, l.first, what))
	}
}

// isACLErr reports whether err is the refusal of a POSIX ACL attribute.
func isACLErr(err error) bool { return strings.Contains(err.Error(), "system.posix_acl_") }

// maxFileSize is the largest file a filesystem of type fsType (as
// fileio.FSType names it) holds, or 0 when it sets no limit a file
// could reach: FAT keeps a file's size in 32 bits.
func maxFileSize(fsType string) int64 {
	switch fsType {
	case "vfat", "msdos", "fat", "fuse.fusefat", "fusefat":
		return 1<<32 - 1
	}
	return 0
}

// What a destination may not keep, in the words of the not-kept notes.
const (
	lostOwners   = "owners"
	lostModes    = "permission bits"
	lostXattrs   = "extended attributes"
	lostACLs     = "POSIX ACLs"
	lostSymlinks = "symlinks"
	lostBtimes   = "creation times"
)

// lostKind is one kind of metadata the destination did not keep: how many
// entries lost it and the first refusal, for the note.
type lostKind struct {
	n     int64
	first string
	// someOnly: every refusal was of an attribute too large for the
	// filesystem, which keeps the others.
	someOnly bool
}

// modeKept checks, after the mode of a destination file was set to want
// without an error, that the file shows it (st, from its descriptor): a
// filesystem that stores no modes (exFAT and FAT through FUSE) may accept
// the change and keep nothing. One that does not is recorded as a
// permission bits not kept.
func (fsi *fsInfo) modeKept(st *fileio.Stat, want uint32) {
	if st.Mode&fileio.ModeBits == want&fileio.ModeBits {
		return // fileio.ModeBits: on Windows, the read-only attribute alone
	}
	fsi.cannotKeep(lostModes, fmt.Errorf("mode %04o set, the file shows %04o: %w", want, st.Mode&0o7777, fileio.ErrUnsupported))
}

// cannotKeep reports whether err, from setting metadata of kind on the
// destination, means the filesystem cannot keep that kind at all (ENOSYS,
// ENOTSUP and the like; for an owner set as root, EPERM too: exFAT and FAT
// store none, and root may give any file any owner elsewhere), or cannot
// keep an extended attribute that large (fileio.ErrXattrTooLarge: the
// ENOSPC ext4 and btrfs answer with room to spare, which is no full
// destination). Then it is recorded, said once per run in the summary,
// and not a failure of the entry.
func (fsi *fsInfo) cannotKeep(kind string, err error) bool {
	e := fsi.e
	if err == nil {
		return false
	}
	tooLarge := kind == lostXattrs && errors.Is(err, fileio.ErrXattrTooLarge)
	if !fileio.IsFallback(err) && !tooLarge && !(kind == lostOwners && e.root && fileio.IsPermission(err)) {
		return false
	}
	if kind == lostXattrs && isACLErr(err) {
		kind = lostACLs
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if fsi.lost == nil {
		fsi.lost = map[string]*lostKind{}
	}
	l := fsi.lost[kind]
	if l == nil {
		first := ErrText(err)
		if pe := (*os.PathError)(nil); tooLarge && errors.As(err, &pe) {
			first = pe.Op + ": " + pe.Err.Error() // which attribute: the entry keeps the others
		}
		l = &lostKind{first: first, someOnly: true}
		fsi.lost[kind] = l
	}
	l.n++
	l.someOnly = l.someOnly && tooLarge
	return true
}
