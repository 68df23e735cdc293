package meta

import (
	"strings"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Dir is a destination directory the walk made or went through, to be
// given its source's metadata last: its source (SrcRel below the walk
// root SrcRoot), its place in the destination (DstRel, "" for the root),
// its source's stat, and whether the run made it.
type Dir struct {
	SrcRoot, SrcRel, DstRel string
	St                      fileio.Stat
	Created                 bool
}

// DirAccess is how the directory pass reaches the directories of its
// list: through the run's own handles, never by a path from "/".
type DirAccess interface {
	// Staged reports whether the destination directory dstRel is still
	// staged (left for the next run to remove, which a read-only mode
	// would hinder): it is then left as it is.
	Staged(dstRel string) bool
	// OpenDst opens the destination directory dstRel beneath the root
	// without following symlinks.
	OpenDst(dstRel string) (*fileio.Dir, error)
	// OpenSrc opens the source directory srcRel below the walk root
	// srcRoot as the walk opened it (below the root, so that a path
	// longer than PATH_MAX still gets its attributes).
	OpenSrc(srcRoot, srcRel string) (*fileio.Dir, error)
	// Lstat stats the destination entry rel ("." for the root).
	Lstat(rel string) (fileio.Stat, error)
	// Resolution is the time resolution known for filesystem dev.
	Resolution(dev uint64) int64
}

// Deeper is the order of the directory pass: whether the destination
// directory aRel lies deeper than bRel (the root, "", shallowest).
func Deeper(aRel, bRel string) bool {
	depth := func(rel string) int {
		if rel == "" {
			return -1
		}
		return strings.Count(rel, "/")
	}
	return depth(aRel) > depth(bRel)
}

// ApplyDirs gives each destination directory of dirs, in their order
// (deepest first: Deeper), its source's owner, mode, extended attributes
// and times: after its contents are written, so read-only directories
// copy and their times stay as the source's. A cancelled run does it too,
// for every directory listed so far: it is quick, and what a directory
// lacks the next run adds (moving its mtime, so that it is set again). A
// directory that fails is handed to fail and the pass goes on.
func (c *Config) ApplyDirs(dirs []Dir, a DirAccess, fail func(rel string, err error)) {
	for i := range dirs {
		if err := c.applyDir(&dirs[i], a); err != nil {
			fail(dirs[i].DstRel, err)
		}
	}
}

func (c *Config) applyDir(dm *Dir, a DirAccess) error {
	if a.Staged(dm.DstRel) || c.dirUpToDate(dm, a) {
		return nil
	}
	dd, err := a.OpenDst(dm.DstRel)
	if err != nil {
		return err
	}
	defer dd.Close()
	var srcF *fileio.File
	if sd, err := a.OpenSrc(dm.SrcRoot, dm.SrcRel); err == nil {
		defer sd.Close()
		srcF = sd.AsFile()
	}
	f := dd.AsFile()
	if err := c.Apply(f, srcF, &dm.St, Born{}, nil); err != nil {
		return err
	}
	return f.SetTimes(dm.St.Atime, dm.St.Mtime)
}

// dirUpToDate reports whether the destination directory of dm already has
// its source's mode, owner and mtime, as after a rerun that changed nothing
// in it (a write in it would have moved its mtime): then nothing is
// applied, which spares a rerun five calls and three opens per directory.
// As for an unchanged file, its extended attributes are not compared and
// its access time is left as it is (listing it to compare moves it). Where
// the filesystem keeps no permission bits, modes are not compared.
func (c *Config) dirUpToDate(dm *Dir, a DirAccess) bool {
	if dm.Created {
		return false // its mtime is the creation's, which a coarse resolution may not tell apart
	}
	rel := dm.DstRel
	if rel == "" {
		rel = "."
	}
	cur, err := a.Lstat(rel)
	s := &dm.St
	return err == nil && cur.IsDir() && (cur.Mode == s.Mode || c.ModesLost != nil && c.ModesLost(cur.Dev)) && cur.Uid == s.Uid && cur.Gid == s.Gid &&
		hashcache.SameTime(cur.Mtime, s.Mtime, a.Resolution(cur.Dev))
}
