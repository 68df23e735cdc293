package destfs

import (
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// The dry run's view of DEST. A dry run writes nothing to find out what
// the destination can do, so these answers are told from what can be read:
// the filesystem's type, a directory's listing and attributes, and where
// the run would make DEST, the filesystem of its nearest existing parent.
// They are the dry run's stand-ins for the probes and the tries of the real
// run (a clone, a symlink, a fold probe, the directory-rename probe).

// dryDest is DEST's device and filesystem type in a dry run, taken once.
type dryDest struct {
	once sync.Once
	dev  uint64
	typ  string
}

// DryDest is DEST's device and filesystem type in a dry run: its own, or
// where the run would make it, its nearest existing parent's.
func (fi *Info) DryDest() (dev uint64, fsType string) {
	dd := &fi.dry
	dd.once.Do(func() {
		if fi.cfg.Root != nil {
			dd.dev, dd.typ = fi.rootDev, fi.caps.fsType
			return
		}
		path := fileio.NearestExisting(fi.cfg.RootPath)
		d, err := fileio.OpenDir(path)
		if err != nil {
			return
		}
		defer d.Close()
		if st, err := d.Stat(); err == nil {
			dd.dev = st.Dev
		}
		dd.typ, _ = fileio.FSType(path)
	})
	return dd.dev, dd.typ
}

// ClonesByType says whether a filesystem of this type clones (FICLONE).
func ClonesByType(fsType string) bool {
	switch fsType {
	case "btrfs", "xfs", "bcachefs":
		return true
	}
	return false
}

// DryClones says, in a dry run, which tries no clone, whether DEST's
// filesystem is of a type that clones (DryDest, ClonesByType).
func (fi *Info) DryClones() bool {
	_, t := fi.DryDest()
	return ClonesByType(t)
}

// DryClonesFrom says, in a dry run, whether a file on device dev would be
// cloned into DEST: it is on DEST's filesystem, one of a type that clones.
func (fi *Info) DryClonesFrom(dev uint64) bool {
	d, t := fi.DryDest()
	return dev == d && ClonesByType(t)
}

// SymlinksLostByType says whether the destination's filesystem is of a
// type that holds no symlinks (FAT, exFAT).
func (fi *Info) SymlinksLostByType() bool {
	path, t := fi.cfg.RootPath, fi.caps.fsType
	if t == "" { // DEST that would be made: its nearest existing parent's
		path = fileio.NearestExisting(path)
		t, _ = fileio.FSType(path)
	}
	switch t {
	case "vfat", "msdos", "exfat", "fuse.exfat", "fuse.fusefat":
		return true
	case "fuseblk":
		switch fileio.FSName(path) {
		case "FAT", "FAT32", "exFAT":
			return true
		}
	}
	return false
}

// DryFold is FoldOf for a dry run, which puts no name to the destination:
// how the directory dd folds names is told from its listing where that
// can (LookFold, as the real run does first), else from the filesystem
// (FAT and exFAT fold case, a casefold directory case and normalisation).
// A directory the run would make (dd nil) is judged as DEST's filesystem,
// and DEST that would be made as the filesystem of its nearest existing
// parent. The groups of names are then settled from the listing alone
// (PlanFold: names it cannot tell apart are one name, as where the real
// run cannot probe).
func (fi *Info) DryFold(dd *fileio.Dir, listing []fileio.DirEntry) FoldInfo {
	if dd == nil {
		dd, listing = fi.cfg.Root, nil
	}
	path := fileio.NearestExisting(fi.cfg.RootPath)
	if dd != nil {
		path = dd.Path()
	}
	var info FoldInfo
	ok := false
	if dd != nil {
		info, ok = LookFold(dd, listing)
	}
	if !ok {
		switch fileio.FSName(path) {
		case "FAT", "FAT32", "exFAT":
			info = FoldInfo{Folds: true}
		default:
			if dd != nil && fileio.CaseFoldAttr(dd) {
				info = FoldInfo{Folds: true, Normalises: true}
			}
		}
	}
	if info.On() && dd != nil {
		if st, err := dd.Stat(); err == nil {
			fi.NoteFoldFSType(st.Dev, path)
		}
	}
	info.NoProbe = true
	return info
}

// DryStage is, in a dry run, the judgement of staging a new directory made
// in parent (nil: one the run would make too) where it tells without
// writing: a FUSE filesystem's new directories are not staged
// (DirRenameKeeps, which asks no probe of one, calls note). Elsewhere the
// real run's probe is taken to succeed. Where DEST would be made on a FUSE
// filesystem, DryStage returns the note naming DEST, where the real run
// makes its first directory, for the caller to give unless it has one.
func (fi *Info) DryStage(parent *fileio.Dir, note func(string)) (made string) {
	if !fileio.CanStageDirs {
		return ""
	}
	if parent == nil {
		parent = fi.cfg.Root
	}
	if parent != nil {
		if fileio.IsFUSE(parent) {
			fi.DirRenameKeeps(parent, "", note) // FUSE: no probe, nothing recorded
		}
		return ""
	}
	d, err := fileio.OpenDir(fileio.NearestExisting(fi.cfg.RootPath))
	if err != nil {
		return ""
	}
	defer d.Close()
	if fileio.IsFUSE(d) {
		return StagingNote(fi.cfg.RootPath, WhyNotStagedFUSE)
	}
	return ""
}
