package copyengine

// The pipeline's side of names that fold (internal/destfs/fold.go says
// which destinations fold and which source names are one name there):
// what a walked directory and the decider do with an entry the destination
// holds under another spelling, and the leftovers of fastcopy's own that a
// create may remove. They stay here because they work on the engine's
// entries (entry, dirList, handle) and its record of what runs made.

import (
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/transfer"
)

// respellClash is the failure of the source entry name (in this
// directory), which the destination holds as dstRel under another
// spelling, or below a directory it holds so: see respelled.
func (l *dirList) respellClash(name, dstRel string) *CollisionError {
	e := l.wk.e
	how := "case-insensitive"
	if l.fold != nil {
		how = l.fold.String()
	}
	return &CollisionError{Name: joinRel(l.w.srcRel, name), Winner: dstRel, Dest: e.dstRootPath, FS: e.decide.fsTypeOf(l.dd), How: how, Held: true}
}

// respelled settles a source entry whose destination entry DEST holds
// under another spelling (en.clash: "readme" onto "README", or a file
// below a directory held so). Which file DEST holds there is not known:
// it may be the copy of another source name, the only one left once
// --move removed that source ("README" and "readme" in one source
// directory: the first run moves README and fails readme; its rerun finds
// README). So it is never replaced by other content: an entry of another
// type or size fails at once; a regular file of the same size is read on
// both sides (en.check, with contested: neither size and mtime nor DEST's
// cache entry are proof) and fails unless the digests are equal; a
// symlink with the same target, a special file of the same type and
// device, an empty file onto an empty file hold what the source holds
// (en.equal). It reports false when en is to fail, with en.clash.
func (dc *decider) respelled(dst *handle, en *entry) bool {
	d, s := en.dstSt, &en.st
	same := d.Type() == s.Type()
	switch {
	case !same:
	case s.IsRegular():
		if same = d.Size == s.Size; same && s.Size > 0 {
			en.contested, en.check = true, true
		} else if same {
			en.equal = true
		}
	case s.IsSymlink():
		t, err := "", error(nil)
		if dst != nil {
			t, err = dst.d.Readlink(en.dstName)
		}
		same = dst != nil && err == nil && t == en.target
	case s.Type() == fileio.ModeChar || s.Type() == fileio.ModeBlock:
		same = d.Rdev == s.Rdev
	}
	if !same {
		return false
	}
	if !s.IsRegular() {
		en.equal = true
	}
	return true
}

// ownLeftover reports whether name in dd, which an exclusive create found
// taken, is a leftover of fastcopy's own that may be removed: a
// temporary's name that the record of what runs made names (internal/made), an
// entry of type want (0: anything but a directory),
// listed under exactly that spelling, not another entry whose name folds
// to it (a source file ".A.fastcopy-tmp" copied beside the temporary
// ".a.fastcopy-tmp" of a file "a" on exFAT). The listing is read whether
// or not dd is known to fold (a probe can fail), at the cost of one
// listing per such create, which only an interrupted run's leftovers
// cause. Anything else stays, and the create's failure is the entry's.
func (e *engine) ownLeftover(dd *fileio.Dir, dirRel, name string, want uint32) bool {
	if !isTempName(name) {
		return false
	}
	st, err := dd.Lstat(name)
	if err != nil || (want != 0 && st.Type() != want) || (want == 0 && st.IsDir()) {
		return false
	}
	if !e.made.Ours(dirRel, name, &st) {
		return false // named like one, but no record shows a run made it (internal/made)
	}
	names, err := dd.ReadDir()
	if err != nil {
		return false
	}
	for _, n := range names {
		if n.Name == name {
			return true
		}
	}
	return false
}

// errNameTaken is the failure of a create whose name another entry holds.
func errNameTaken(name string, err error) error {
	return transfer.NameTaken(name, err)
}

// clearLeftover removes name from dd (the destination directory dirRel) before it is created, when it is a
// leftover of fastcopy's own (see ownLeftover). Where nothing answers to
// the name (the usual case) it costs one lookup.
func (e *engine) clearLeftover(dd *fileio.Dir, dirRel, name string) {
	if _, err := dd.Lstat(name); err == nil && e.ownLeftover(dd, dirRel, name, 0) {
		if dd.Remove(name) == nil {
			e.made.Gone(joinRel(dirRel, name))
		}
	}
}
