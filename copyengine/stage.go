package copyengine

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/staging"
)

// A directory the run creates is made under a temporary name and renamed
// onto its own once its files are in place (internal/staging says how,
// and what it guarantees). The pipeline counts on each stage the files
// still being written into it (add, settle): the last to settle publishes
// it.

// defaultStageMaxFiles and defaultStageMaxBytes bound a directory kept
// staged while its files are written (tests lower them: hooks).
const (
	defaultStageMaxFiles = 10000
	defaultStageMaxBytes = int64(64 << 20)
)

// stage is a directory made under its temporary name, with the count of
// what is still to settle in it.
type stage struct {
	*staging.Stage
	sg   *stager
	open atomic.Int64
}

// stager is the stage that makes new destination directories under
// temporary names and puts each in place once its files are
// (staging.Stager, made once the destination is open: openDest).
type stager struct {
	e    *engine
	dirs *staging.Stager
}

// add counts one more file written under its own name in the directory.
func (s *stage) add() { s.open.Add(1) }

// settle is called once for each file counted by add (placed, failed or
// given up), and once when the listing is done; the last call puts the
// directory in place.
func (s *stage) settle() {
	if s != nil && s.open.Add(-1) == 0 {
		s.sg.publish(s)
	}
}

// report runs what placing rel reported (counts, events, the hash cache)
// once the staged directory s it is in is published (staging.Stager.Report):
// an entry of a stage that failed already is only counted as done.
func (sg *stager) report(s *stage, rel string, f func()) {
	var st *staging.Stage
	if s != nil {
		st = s.Stage
	}
	if !sg.dirs.Report(st, f) {
		sg.e.stats.FilesDone.Add(1)
	}
}

// publish renames a staged directory onto its own name
// (staging.Stager.Publish); one that cannot be put in place fails, its
// files counted as done: with a *MismatchError (exit 4) when its name was
// made to hold another directory.
func (sg *stager) publish(s *stage) { sg.publishDir(s.Stage) }

func (sg *stager) publishDir(s *staging.Stage) {
	e := sg.e
	var pe *staging.PublishError
	if err := sg.dirs.Publish(s); !errors.As(err, &pe) {
		return
	}
	e.stats.FilesDone.Add(int64(pe.Lost))
	if pe.Replaced {
		// Not the directory written and verified: exit 4.
		e.fail(pe.Rel, &MismatchError{Path: pe.Rel, Cause: pe.Error()})
	} else {
		e.fail(pe.Rel, errors.New(pe.Error()))
	}
}

// spoil keeps s out of sight for good: something in it that did not copy
// could not be removed, and would otherwise show under its final path.
func (sg *stager) spoil(s *stage, err error) {
	sg.e.fail(s.Rel(), sg.dirs.Spoil(s.Stage, err))
}

// unwrite removes a file that will not be put in place (tmp in d). In a
// staged directory, where it has its own name, one that cannot be removed
// keeps the whole directory out of sight.
func (sg *stager) unwrite(s *stage, d *fileio.Dir, tmp string) {
	err := d.Remove(tmp)
	if s != nil && err != nil && !fileio.IsNotExist(err) {
		sg.spoil(s, fmt.Errorf("could not remove %q, which did not copy: %w", tmp, err))
	}
}

// publishAll puts every directory still staged in place, parents first,
// once the copy has stopped: whatever is in them then is complete.
func (sg *stager) publishAll() {
	for _, s := range sg.dirs.Left() {
		sg.publishDir(s)
	}
}

// stageable reports whether a directory holding files (its non-directory
// entries) is kept staged while they are written.
func (h *hooks) stageable(files []entry) bool {
	n, bytes := 0, int64(0)
	for i := range files {
		if files[i].st.IsRegular() {
			if files[i].st.Size >= h.resumeMinSize() {
				return false // its temporary is kept for a rerun to take up (see transfer.Resume)
			}
			n++
			bytes += files[i].st.Size
		}
	}
	maxFiles, maxBytes := h.stageLimits()
	return n <= maxFiles && bytes <= maxBytes
}

// stageDir makes the new destination directory rel (name in parent) under
// its temporary name tmp and returns its stage (staging.Stager.Mkdir and
// Adopt), or nil where directories are not staged or tmp cannot be made:
// then it is made under its own name. ok is false when it failed: a
// directory found not to be the one made fails with a *MismatchError.
func (sg *stager) stageDir(parent *fileio.Dir, rel, tmp string) (s *stage, ok bool) {
	e := sg.e
	if !fileio.CanStageDirs || e.skipWrite() || !sg.dirRenameKeeps(parent, staging.ParentOf(rel)) {
		return nil, true
	}
	if !sg.dirs.Mkdir(parent, rel, tmp) {
		return nil, true
	}
	e.count(func(s *Summary) { s.Dirs++ })
	e.event(ActMkdir, rel)
	st, err := sg.dirs.Adopt(parent, rel, tmp)
	if errors.Is(err, staging.ErrReplaced) {
		e.fail(rel, &MismatchError{Path: rel, Cause: err.Error()})
		return nil, false
	} else if err != nil {
		e.fail(rel, err)
		return nil, false
	}
	// The stage holds one reference for its listing, which walkDir
	// settles when it has sent the files.
	s = &stage{Stage: st, sg: sg}
	s.open.Store(1)
	return s, true
}
