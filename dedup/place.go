package dedup

import (
	"errors"
	"syscall"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/linkdest"
	"github.com/fastcopy/fastcopy/internal/refusal"
	"github.com/fastcopy/fastcopy/internal/source"
)

// Recorder is the run's record of what it makes in the destination
// (destfs.Recorder: made.Record), told before and after a temporary is
// created so that a later run knows it for a leftover of fastcopy's own.
type Recorder = destfs.Recorder

// Place is a duplicate's sharing of a proven target's data: the target
// (Found, from Proof.Prove) and the temporary Tmp the duplicate is made
// under in its destination directory Dir (DirRel, relative to the
// destination root). Clone and Link make the temporary; the caller renames
// it and reports the outcome.
type Place struct {
	Found  *Found
	Dir    *fileio.Dir
	DirRel string
	Tmp    string
	Made   Recorder
}

// Clone clones the target into Tmp: from Found.File when the proof opened
// (and re-read) it already, otherwise from the target opened here, which
// must be the file as placed (Found.Cur); ok is false when it is not, and
// the caller copies. finish gives the open temporary its metadata; on any
// error Tmp is removed. made is the temporary's stat as created.
func (p Place) Clone(finish func(f *fileio.File) error) (made fileio.Stat, ok bool, err error) {
	tf := p.Found.File
	if tf == nil {
		if tf, err = p.Found.Dir.Open(p.Found.Name, false); err != nil {
			return fileio.Stat{}, false, err
		}
		defer tf.Close()
		if st, err := tf.Stat(); err != nil || source.Changed(&p.Found.Cur, &st) {
			return fileio.Stat{}, false, nil // replaced since its check: copied instead
		}
	}
	dd, tmp := p.Dir, p.Tmp
	p.Made.Before(p.DirRel, tmp, false)
	f, err := fileio.CreateTemp(dd, tmp)
	if err != nil {
		p.Made.After(dd, p.DirRel, tmp, nil, err)
		return fileio.Stat{}, false, err
	}
	if st, serr := f.Stat(); serr == nil {
		p.Made.After(dd, p.DirRel, tmp, &st, nil)
	}
	defer func() {
		f.Close()
		if err != nil {
			_ = dd.Remove(tmp)
		}
	}()
	if made, err = f.Stat(); err != nil {
		return fileio.Stat{}, false, err
	}
	if err = f.Clone(tf); err != nil {
		return fileio.Stat{}, false, err
	}
	if err = finish(f); err != nil {
		return fileio.Stat{}, false, err
	}
	return made, true, nil
}

// Link makes Tmp a hard link to the target, checked to be the inode
// proven (Found.Cur: linkat names the target, and the new name must be
// the inode checked). ok is false when it cannot be, and the caller
// copies: the target was replaced, or the filesystem refuses the link
// here, which note then says for the run's summary.
func (p Place) Link() (ok bool, note string, err error) {
	dd, tmp, cur := p.Dir, p.Tmp, &p.Found.Cur
	p.Made.Before(p.DirRel, tmp, false)
	err = linkdest.LinkChecked(dd, tmp, p.Found.Dir, p.Found.Name, cur.Dev, cur.Ino)
	p.Made.After(dd, p.DirRel, tmp, nil, err)
	if errors.Is(err, linkdest.ErrReplaced) {
		return false, "", nil // copied instead
	} else if err != nil {
		if fileio.IsFallback(err) || fileio.IsPermission(err) || errors.Is(err, syscall.EMLINK) {
			return false, "hard links are not possible for some files here (" + refusal.Text(err) + "); those were copied", nil
		}
		return false, "", err
	}
	return true, "", nil
}
