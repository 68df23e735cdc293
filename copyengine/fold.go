package copyengine

// The pipeline's side of names that fold (internal/destfs/fold.go says
// which destinations fold, which source names are one name there and what
// an entry held under another spelling is found to be; internal/made which
// leftovers a create may remove): the failure of a walked directory's
// entry and the decider's marks on an entry the destination holds under
// another spelling.

import (
	"os"

	"github.com/fastcopy/fastcopy/internal/destfs"
)

// respellClash is the failure of the source entry name (in this
// directory), which the destination holds as dstRel under another
// spelling, or below a directory it holds so: see respelled.
func (l *dirList) respellClash(name, dstRel string) *CollisionError {
	e := l.wk.e
	how := "case-insensitive"
	if l.p.Fold != nil {
		how = l.p.Fold.String()
	}
	return &CollisionError{Name: joinRel(l.w.srcRel, name), Winner: dstRel, Dest: e.dstRootPath, FS: e.fs.info.FSTypeOf(l.dd), How: how, Held: true}
}

// respelled settles a source entry whose destination entry DEST holds
// under another spelling (en.clash) by destfs.Respelled: it reports false
// when en is to fail, with en.clash; a regular file of the same size is
// read on both sides (en.check, with contested); one that holds what the
// source holds is en.equal.
func (dc *decider) respelled(dst *handle, en *entry) bool {
	readlink := func() (string, error) {
		if dst == nil {
			return "", os.ErrNotExist
		}
		return dst.d.Readlink(en.dstName)
	}
	switch destfs.Respelled(&en.st, en.dstSt, en.target, readlink) {
	case destfs.HeldContested:
		en.contested, en.check = true, true
	case destfs.HeldSame:
		en.equal = true
	default:
		return false
	}
	return true
}
