package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/transfer"
)

// An interrupted copy of a large file keeps its temporary for the next
// run to take up (internal/transfer: Resume says which, and how one is
// taken up). NoResume (--no-resume) neither keeps nor takes up
// temporaries.

// defaultResumeMin is the size from which a file's temporary is kept when
// its copy is interrupted (tests lower it: hooks). A smaller file is copied again whole: it
// costs little, and a directory of such files can be staged (internal/staging).
const defaultResumeMin = int64(64 << 20)

// resume is which copies of this run keep their temporary when
// interrupted (transfer.Resume).
func (cp *copier) resume() transfer.Resume {
	e := cp.e
	return transfer.Resume{Off: e.opt.NoResume, Min: e.opt.hooks.resumeMinSize()}
}

// keepsTemp reports whether a temporary tmp of en that did not finish is
// kept for the next run rather than removed (transfer.Config.KeepsTemp).
func (cp *copier) keepsTemp(en *entry, tmp string) bool {
	c := transfer.Config{Ctx: cp.e.ctx, Resume: cp.resume()}
	return c.KeepsTemp(&en.st, tmp == en.dstName)
}

// resumedEvent counts a copy that took up a temporary at at and reports it.
func (cp *copier) resumedEvent(rel string, at int64) {
	e := cp.e
	e.count(func(s *Summary) {
		s.Resumed++
		s.BytesResumed += at
	})
	e.emit(Event{Action: ActResume, Path: rel, Resumed: at})
}

// dropKept removes the temporaries scanDest kept that are left when the
// walk of their directory is done: those of names that were not planned as
// files (excluded, gone, no longer files), which no copy writes. A run
// that is stopping leaves them for the next.
func (cp *copier) dropKept(dst *handle, kept map[string]string) {
	e := cp.e
	if e.ctx.Err() != nil {
		return
	}
	for _, tmp := range kept {
		cp.removeKept(dst, tmp)
	}
}

// removeKept removes a temporary scanDest kept that no copy takes up (its
// file is unchanged, or not resumable), as any other leftover: before the
// file is handed to a worker, which may write a temporary of that name.
func (cp *copier) removeKept(dst *handle, tmp string) {
	e := cp.e
	if dst == nil {
		return
	}
	if e.skipWrite() {
		e.count(func(s *Summary) { s.TempsRemoved++ }) // would be removed
		e.event(ActCleanTmp, joinRel(dst.rel, tmp))
		return
	}
	if err := dst.d.Remove(tmp); err == nil {
		e.count(func(s *Summary) { s.TempsRemoved++ })
		e.event(ActCleanTmp, joinRel(dst.rel, tmp))
	}
}
