package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/move"
	"github.com/fastcopy/fastcopy/verify"
)

// ErrMoveIncomplete is returned by Run (wrapped in a *MoveIncompleteError)
// when --move kept sources because the destination could not keep their
// extended attributes or ACLs: every copy is in place, but the move is
// not done. It counts as ErrSomeFailed (exit 3).
var ErrMoveIncomplete = move.ErrMoveIncomplete

// MoveIncompleteError says how many sources --move kept because the
// destination could not keep their extended attributes or ACLs
// (move.MoveIncompleteError).
type MoveIncompleteError = move.MoveIncompleteError

// moveStage is the engine's side of --move: it builds the journal
// (internal/move) from the run and gives the journal what it asks of the
// run; each source entry whose copy reached its final name is noted (note,
// or item and then Journal.Note once placed), and after the final flush
// finish removes those still proven to be what was copied.
type moveStage struct{ e *engine }

// journal makes the journal of a run with --move, nil without.
func (ms moveStage) journal() *move.Journal {
	e := ms.e
	if !e.opt.Move {
		return nil
	}
	return move.New(move.Config{
		NoSync:    e.opt.NoSync,
		SkipWrite: e.skipWrite,
		AllXattrs: e.root,
		OpenDir:   e.opt.openRoot,
		Dest:      func() (string, *fileio.Dir) { return e.dstRootPath, e.dstRoot },
		Dirs:      ms.dirs,
		Failures:  e.failedPaths,
		Stopped:   func() bool { return e.ctx.Err() != nil },
		Failed:    e.fail,
		Removed:   ms.removed,
		Hashed:    func(n int64) { e.count(func(s *Summary) { s.BytesHashed += n }) },
	})
}

// item is what --move needs to remove the source entry en of src
// once its copy at rel is placed: taken while src is open.
func (ms moveStage) item(src *handle, en *entry, rel string) move.Item {
	if src == nil {
		return move.Item{}
	}
	return ms.e.mover.Source(src.d, en.name, en.st, rel)
}

// note notes the source entry en of src, whose copy reached its final
// name rel with the content sum (zero when unknown), to remove once the
// copy is durable.
func (ms moveStage) note(src *handle, en *entry, rel string, sum verify.Sum) {
	ms.e.mover.Note(ms.item(src, en, rel), sum)
}

// finish removes the noted sources (after the final flush of a run
// that was not stopped) and puts in the summary the sources kept in
// place, once per reason.
func (ms moveStage) finish() {
	e := ms.e
	r := e.mover.Finish()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sum.SourcesKept += r.Kept()
	if lines := r.Lines(e.fs.info.FSName()); len(lines) > 0 {
		e.sum.MoveKept = append(e.sum.MoveKept, lines...)
	}
}

// removed counts and reports a source entry --move removed (in a
// dry run: would remove); dir: a directory left empty.
func (ms moveStage) removed(rel string, dir bool) {
	e := ms.e
	act := ActRemoveSource
	if e.skipWrite() {
		act = ActWouldRemoveSource
	}
	if dir {
		e.count(func(s *Summary) { s.SourceDirsGone++ })
		e.event(act, rel+"/")
		return
	}
	e.count(func(s *Summary) { s.SourcesRemoved++ })
	e.event(act, rel)
}

// dirs are the source directories the copy went through, for
// --move to remove those left empty.
func (ms moveStage) dirs() []move.Dir {
	walked := ms.e.commit.walkedDirs()
	dirs := make([]move.Dir, len(walked))
	for i, dm := range walked {
		dirs[i] = move.Dir{SrcRoot: dm.srcRoot, SrcRel: dm.srcRel, DstRel: dm.dstRel}
	}
	return dirs
}

// failedPaths are the paths of what failed so far.
func (e *engine) failedPaths() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	failed := make([]string, 0, len(e.sum.Failures))
	for _, f := range e.sum.Failures {
		failed = append(failed, f.Path)
	}
	return failed
}
