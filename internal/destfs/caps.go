package destfs

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Config is the input of Info: what a run tells this package of itself
// and its destination. It is the whole contract: Info reads nothing else.
type Config struct {
	// RootPath is the destination as given: named in messages, asked for
	// its filesystem's type.
	RootPath string
	// Root is the destination root, opened; nil where it does not exist
	// (a dry run that would make it). Probes of its own filesystem are made
	// there, whichever directory asks first, so that a rerun touches no
	// other directory.
	Root *fileio.Dir
	// SkipWrite is the dry run's gate (the engine's one): write nothing
	// to find out, go by the filesystem's type; nil: the run writes.
	SkipWrite func() bool
	// Privileged: the run may give any file any owner (root), so an EPERM
	// from setting one is the filesystem's refusal.
	Privileged bool
	// Made records what a run makes in Root before it is made (the
	// record of what runs made, made.go in copyengine), so that a probe a
	// cut run leaves there is a leftover the next run may remove; nil for
	// none.
	Made Recorder
}

// dry reports whether this is a dry run (SkipWrite).
func (c *Config) dry() bool { return c.SkipWrite != nil && c.SkipWrite() }

// Recorder is the record of what runs made in the destination root: a
// name is noted before it is created (Before), confirmed or dropped after
// (After), and struck off once removed (Gone).
type Recorder interface {
	Before(dirRel, name string, dir bool)
	After(dd *fileio.Dir, dirRel, name string, st *fileio.Stat, err error)
	Gone(rel string)
}

// Info is what a run learns of the filesystems it reads and writes: what
// the destination can keep (caps), and per filesystem its volume identity,
// time resolution, name rules and folding (devinfo.go). The run's stages
// share it; its methods are safe for concurrent use. The zero value knows
// nothing; Start gives it its Config.
type Info struct {
	cfg     Config
	rootDev uint64 // Root's device, when Root is set
	caps    destCaps
	devs    devInfos             // per filesystem: volume identity, time resolution, names, folding, renames
	mu      sync.Mutex           // guards caps.seen, caps.further and lost
	lost    map[string]*lostKind // what the destination could not keep
	dry     dryDest              // DEST's device and type in a dry run (DryDest)
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
	seen map[[2]uint64]bool
	// further counts the names met after the first of a source inode, when
	// noLinks, whether copied or found unchanged by a rerun: separate files
	// either way.
	further int64
}

// Start gives fi its Config and learns what the destination root can keep
// from its filesystem's type. Unless a dry run (cfg.SkipWrite), hard links may be tried
// in cfg.Root later (HasLinks).
func (fi *Info) Start(cfg Config) {
	fi.cfg = cfg
	fi.caps.seen = map[[2]uint64]bool{}
	if t, err := fileio.FSType(cfg.RootPath); err == nil {
		fi.caps.fsType = t
	}
	fi.caps.maxFile = MaxFileSize(fi.caps.fsType)
	if cfg.Root != nil {
		if st, err := cfg.Root.Stat(); err == nil {
			fi.rootDev = st.Dev
		}
		if !cfg.dry() {
			fi.caps.probe = cfg.Root
		}
	}
}

// FSType is the destination root's filesystem type as fileio.FSType names
// it, "" when unknown.
func (fi *Info) FSType() string { return fi.caps.fsType }

// HasLinks reports whether the destination makes hard links. The type
// answers for the common filesystems; for others (FUSE's fuseblk is
// exfat-fuse or ntfs-3g) a link is tried in the root: a temporary and a
// second name for it, both removed, under temporaries' names (a leftover
// goes with the next run's cleanup). The root's times, which that moves,
// are put back at once (KeepDirTimes).
func (fi *Info) HasLinks() bool {
	fi.caps.linksOnce.Do(func() {
		switch fi.caps.fsType {
		case "vfat", "msdos", "exfat", "fuse.fusefat", "fuse.exfat":
			fi.caps.noLinks = true
		case "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "f2fs", "zfs", "bcachefs", "overlay", "ntfs3":
		default:
			fi.caps.noLinks = fi.caps.probe != nil && !linksWork(fi.caps.probe)
		}
	})
	return !fi.caps.noLinks
}

// TooLarge returns the error of a regular file the destination cannot hold,
// or nil: it is refused by name before any byte of it is written, instead
// of failing with EFBIG (or worse) when the write reaches the limit.
func (fi *Info) TooLarge(st *fileio.Stat) error {
	if fi.caps.maxFile <= 0 || !st.IsRegular() || st.Size <= fi.caps.maxFile {
		return nil
	}
	return fmt.Errorf("%w: %d bytes, and %s holds files of at most %d bytes (%s); not written",
		refusal.ErrTooLarge, st.Size, fi.FSName(), fi.caps.maxFile, refusal.HumanBytes(fi.caps.maxFile))
}

// linksWork reports whether d's filesystem makes hard links: it makes a
// file and a second name for it. exFAT and FAT have no hard links
// (exfat-fuse and the kernel's vfat say EPERM, others ENOTSUP or ENOSYS).
// Any other failure says nothing about links and counts as "they work":
// the files then fail, or not, as they would without the probe.
func linksWork(d *fileio.Dir) bool {
	defer KeepDirTimes(d)()
	a := TempName(fmt.Sprintf("fastcopy-link-probe-%d", os.Getpid()))
	b := TempName(fmt.Sprintf("fastcopy-link-probe-%d-2", os.Getpid()))
	f, err := fileio.CreateTemp(d, a)
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

// FSName names the destination's filesystem in messages: by its mount
// point's path, with its type where known.
func (fi *Info) FSName() string {
	if fi.caps.fsType == "" {
		return fmt.Sprintf("the filesystem of %q", fi.cfg.RootPath)
	}
	return fmt.Sprintf("the filesystem of %q (%s)", fi.cfg.RootPath, fi.caps.fsType)
}

// LinkCopy reports whether st, a source inode with several names, is to be
// copied as a file of its own because the destination has no hard links:
// every name after the first one met.
func (fi *Info) LinkCopy(st *fileio.Stat) bool {
	k := [2]uint64{st.Dev, st.Ino}
	fi.mu.Lock()
	defer fi.mu.Unlock()
	if fi.caps.seen[k] {
		fi.caps.further++
		return true
	}
	fi.caps.seen[k] = true
	return false
}

// NotKept is what the destination could not keep, in the words of the
// summary's notes, once per kind. linkCopies is how many further names of
// linked source files the run copied as separate files.
func (fi *Info) NotKept(linkCopies int64) []string {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	var notes []string
	if n := linkCopies; n > 0 {
		notes = append(notes, fmt.Sprintf("hard links: %s has none; %d further names of linked source files were copied as separate verified files", fi.FSName(), n))
	} else if n := fi.caps.further; n > 0 {
		// A rerun that found them all in place: they are still not links.
		notes = append(notes, fmt.Sprintf("hard links: %s has none; %d further names of linked source files are separate files", fi.FSName(), n))
	}
	for _, kind := range []string{LostSymlinks, LostOwners, LostModes, LostACLs, LostXattrs, LostBtimes} {
		l := fi.lost[kind]
		if l == nil {
			continue
		}
		what := fmt.Sprintf("not kept on %d entries", l.n)
		if kind == LostSymlinks {
			what = fmt.Sprintf("%d not copied", l.n)
		}
		which := "them"
		if l.someOnly {
			which = "all of them"
		}
		notes = append(notes, fmt.Sprintf("%s: %s cannot keep %s (%s); %s", kind, fi.FSName(), which, l.first, what))
	}
	return notes
}

// isACLErr reports whether err is the refusal of a POSIX ACL attribute.
func isACLErr(err error) bool { return strings.Contains(err.Error(), "system.posix_acl_") }

// MaxFileSize is the largest file a filesystem of type fsType (as
// fileio.FSType names it) holds, or 0 when it sets no limit a file
// could reach: FAT keeps a file's size in 32 bits.
func MaxFileSize(fsType string) int64 {
	switch fsType {
	case "vfat", "msdos", "fat", "fuse.fusefat", "fusefat":
		return 1<<32 - 1
	}
	return 0
}

// What a destination may not keep, in the words of the not-kept notes:
// the kinds CannotKeep takes.
const (
	LostOwners   = "owners"
	LostModes    = "permission bits"
	LostXattrs   = "extended attributes"
	LostACLs     = "POSIX ACLs"
	LostSymlinks = "symlinks"
	LostBtimes   = "creation times"
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

// ModeKept checks, after the mode of a destination file was set to want
// without an error, that the file shows it (st, from its descriptor): a
// filesystem that stores no modes (exFAT and FAT through FUSE) may accept
// the change and keep nothing. One that does not is recorded as a
// permission bits not kept.
func (fi *Info) ModeKept(st *fileio.Stat, want uint32) {
	if st.Mode&fileio.ModeBits == want&fileio.ModeBits {
		return // fileio.ModeBits: on Windows, the read-only attribute alone
	}
	fi.CannotKeep(LostModes, fmt.Errorf("mode %04o set, the file shows %04o: %w", want, st.Mode&0o7777, fileio.ErrUnsupported))
}

// CannotKeep reports whether err, from setting metadata of kind on the
// destination, means the filesystem cannot keep that kind at all (ENOSYS,
// ENOTSUP and the like; for an owner set as root, EPERM too: exFAT and FAT
// store none, and root may give any file any owner elsewhere), or cannot
// keep an extended attribute that large (fileio.ErrXattrTooLarge: the
// ENOSPC ext4 and btrfs answer with room to spare, which is no full
// destination). Then it is recorded, said once per run in the summary,
// and not a failure of the entry.
func (fi *Info) CannotKeep(kind string, err error) bool {
	if err == nil {
		return false
	}
	tooLarge := kind == LostXattrs && errors.Is(err, fileio.ErrXattrTooLarge)
	if !fileio.IsFallback(err) && !tooLarge && !(kind == LostOwners && fi.cfg.Privileged && fileio.IsPermission(err)) {
		return false
	}
	if kind == LostXattrs && isACLErr(err) {
		kind = LostACLs
	}
	fi.mu.Lock()
	defer fi.mu.Unlock()
	if fi.lost == nil {
		fi.lost = map[string]*lostKind{}
	}
	l := fi.lost[kind]
	if l == nil {
		first := refusal.Text(err)
		if pe := (*os.PathError)(nil); tooLarge && errors.As(err, &pe) {
			first = pe.Op + ": " + pe.Err.Error() // which attribute: the entry keeps the others
		}
		l = &lostKind{first: first, someOnly: true}
		fi.lost[kind] = l
	}
	l.n++
	l.someOnly = l.someOnly && tooLarge
	return true
}
