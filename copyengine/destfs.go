package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// The glue to internal/destfs, which knows what the destination's
// filesystems can hold and keep and how fastcopy names what it writes
// there (temporary names: internal/destfs/tempname.go). The engine builds
// its destfs.Config from Options once DEST is opened (probeCaps) and asks;
// the events and counts stay here.

// NamesMode says what a run does with a name the destination cannot hold
// (destfs.NamesMode).
type NamesMode = destfs.NamesMode

// The --names modes (destfs.NamesStrict, ...).
const (
	NamesStrict = destfs.NamesStrict
	NamesEncode = destfs.NamesEncode
	NamesDecode = destfs.NamesDecode
)

// NameError is the per-file failure of a name that the destination cannot
// hold (destfs.NameError).
type NameError = destfs.NameError

// CollisionError is the failure of a source name that is one name, on the
// destination, with another name of its source directory
// (destfs.CollisionError).
type CollisionError = destfs.CollisionError

// EncodeName returns name in the look-alike encoding: what a file of that
// name is called under --names=encode (destfs.EncodeName).
func EncodeName(name string) string { return destfs.EncodeName(name) }

// DecodeName undoes EncodeName (destfs.DecodeName).
func DecodeName(name string) string { return destfs.DecodeName(name) }

type (
	nameRules = destfs.NameRules
	foldInfo  = destfs.FoldInfo
)

// What a destination may not keep, in the words of the not-kept notes.
const (
	lostOwners   = destfs.LostOwners
	lostModes    = destfs.LostModes
	lostXattrs   = destfs.LostXattrs
	lostSymlinks = destfs.LostSymlinks
	lostBtimes   = destfs.LostBtimes
)

// fsInfo is what the run learns of the filesystems it reads and writes
// (destfs.Info), with the engine it reports to.
type fsInfo struct {
	e    *engine
	info destfs.Info
}

// probeCaps gives the run's Info its Config once the destination root d
// is open (nil: DEST a dry run would make), and learns what d can keep
// from its type. Unless a dry run, hard links may be tried there later.
func (fsi *fsInfo) probeCaps(d *fileio.Dir) {
	e := fsi.e
	var made destfs.Recorder
	if e.made != nil {
		made = e.made
	}
	fsi.info.Start(destfs.Config{RootPath: e.dstRootPath, Root: d, SkipWrite: e.skipWrite, Privileged: e.root, Made: made})
}

// noteNotKept adds to the summary, once, what the destination could not
// keep.
func (fsi *fsInfo) noteNotKept() {
	e := fsi.e
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sum.NotKept = append(e.sum.NotKept, fsi.info.NotKept(e.sum.LinkCopies)...)
}

// dirRenameKeeps reports whether a directory made in parent and renamed
// keeps its files there (destfs.Info.DirRenameKeeps); where it does not,
// Summary.StagingNote says why.
func (sg *stager) dirRenameKeeps(parent *fileio.Dir, dirRel string) bool {
	e := sg.e
	return e.fs.info.DirRenameKeeps(parent, dirRel, func(note string) {
		e.count(func(s *Summary) { s.StagingNote = note })
	})
}
