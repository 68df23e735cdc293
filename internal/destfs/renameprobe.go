package destfs

import (
	"fmt"
	"math/rand/v2"
	"path"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Staging (internal/staging) relies on a directory rename keeping
// what is in the directory. Every kernel filesystem does; a FUSE driver
// need not: fusefat
// renames a directory and leaves the new name empty, its files gone for
// good. So before the first directory is staged on a filesystem, the run
// asks that filesystem, once (fileio.ProbeDirRename): a directory made
// under a temporary's name, a file written in it, the directory renamed,
// the file looked for under the new name. Where it is not there, whole,
// directories are not staged on that filesystem: their files take
// temporary names, one rename each, which every filesystem keeps.
//
// Nothing is staged on FUSE at all, probe or not: a driver is a process
// that can die (exfat-fuse did under load), and a run whose destination
// dies cannot publish its staged directories, so every file verified in
// them would be lost to the next run's cleanup. With a rename per file,
// each verified file is under its own name as soon as it is checked.

// renameProbe is whether a directory rename keeps its contents on one
// destination filesystem, probed once.
type renameProbe struct {
	once sync.Once
	ok   bool
}

// DirRenameKeeps reports whether a directory made in parent (the
// destination directory dirRel) and renamed keeps its files there, probed
// once per filesystem. Where it does not (or the probe could not tell),
// note is called once, with the words of Summary.StagingNote, before any
// caller is answered.
//
// The probe's two names are named in the record of what runs made
// (Config.Made) before either exists, as a staged directory is: a run cut
// off while it probes (a power cut between the rename and the removal)
// leaves a directory the next run can prove its own and remove. Without
// the record it would be a temporary's name that no record names, which
// is the user's, left alone for good.
func (fi *Info) DirRenameKeeps(parent *fileio.Dir, dirRel string, note func(string)) bool {
	st, err := parent.Stat()
	if err != nil {
		return false
	}
	p := &fi.devs.get(st.Dev).rename
	p.once.Do(func() {
		var why string
		if fileio.IsFUSE(parent) {
			why = WhyNotStagedFUSE
		} else {
			id := rand.Uint64()
			a := DigestTemp("fastcopy-rename-probe", id)
			b := DigestTemp("fastcopy-rename-probe-renamed", id)
			if err := fi.probeRename(parent, dirRel, a, b, id); err != nil {
				why = refusal.Text(err)
			}
		}
		p.ok = why == ""
		if !p.ok {
			note(StagingNote(parent.Path(), why))
		}
	})
	return p.ok
}

// probeRename runs fileio.ProbeDirRename in parent with the names a and
// b, each recorded (Config.Made) before it is made and struck off once
// the probe has removed it.
func (fi *Info) probeRename(parent *fileio.Dir, dirRel, a, b string, id uint64) error {
	rec := fi.cfg.Made
	if rec != nil {
		rec.Before(dirRel, a, true)
		rec.Before(dirRel, b, true)
	}
	err := fileio.ProbeDirRename(parent, a, b, []byte(fmt.Sprintf("fastcopy %016x\n", id)))
	if rec != nil {
		for _, name := range []string{a, b} {
			if _, serr := parent.Lstat(name); fileio.IsNotExist(serr) {
				rec.Gone(path.Join(dirRel, name))
			}
		}
	}
	return err
}

// WhyNotStagedFUSE says why new directories on a FUSE filesystem are not
// staged.
const WhyNotStagedFUSE = "it is a FUSE filesystem, whose driver can die with a staged directory's files unpublished"

// StagingNote is Summary.StagingNote for the filesystem of the directory
// at path, whose new directories are not staged, and why.
func StagingNote(path, why string) string {
	return fmt.Sprintf("new directories on the filesystem of %q are made under their own names, each file under a temporary name: %s", path, why)
}
