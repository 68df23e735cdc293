package mirror

import (
	"fmt"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// place is a directory of DEST an entry is planned in: open, on device
// dev, with the noted directory it is when it is one (nil below).
type place struct {
	dir     *fileio.Dir
	in      *noted
	dev     uint64
	srcRoot string
}

// question is what keep is asked: either about a noted directory's
// extras as a whole, once planned (dir set), or about one entry of DEST
// the plan meets (at set).
type question struct {
	dir    *noted
	relist error // listing dir again, checked to be the one the walk listed, failed
	failed bool  // something in dir failed in the run
	extras int   // the extras the plan found in dir

	at                *place
	name, rel, srcRel string
}

// verdict is keep's answer: whether what was asked about is kept, and why
// (said to the user when not ""); for an entry that may go, its stat, the
// identity and type its removal must find again.
type verdict struct {
	kept bool
	why  string
	st   fileio.Stat
}

// keep is --delete's policy, the one place it is written: what may be
// removed, and the proof it needs first (docs/design.md, "What fastcopy
// removes or replaces, and the proof each needs"). Before it is asked,
// Guard has passed, the copy is verified and durable, and the directory
// was listed in full on both sides by the walk (Note). After it, the plan
// removes nothing beyond --max-delete, a directory holding anything kept
// is emptied and kept, and each removal finds the identity and type
// planned (removeEntry) or keeps the entry.
//
// A directory's extras go only if it is, opened again beneath the root,
// the directory the walk listed; nothing in it failed; and DEST spells it
// as the source does. An entry goes only if the source lacks its name (by
// the destination's name key); it is not fastcopy's own record or
// temporary (left to the walk); it is there still; it is not excluded
// (rsync's default); it is not DEST's ASC MHL history; it is on DEST's
// filesystem and no mount point; and it is not the run's hash cache.
func (p *Pass) keep(q question) verdict {
	if q.at == nil {
		d := q.dir
		switch {
		case q.relist != nil:
			return verdict{kept: true, why: refusal.Text(q.relist)}
		case !q.failed && !d.respelled:
			return verdict{}
		case q.extras == 0:
			return verdict{kept: true}
		}
		what := fmt.Sprintf("%d entries", q.extras)
		if q.extras == 1 {
			what = "1 entry"
		}
		why := ", as something in it failed"
		if d.respelled {
			why = fmt.Sprintf(", as the source names it %q, another spelling: they may be the only copies of another source directory's entries", d.srcRel)
		}
		return verdict{kept: true, why: what + why}
	}
	at, proof := q.at, p.cfg.Proof
	if d := at.in; d != nil {
		if d.has[d.key(q.name)] {
			return verdict{kept: true} // the source has it: no extra
		}
		if proof.Ours(at.dir, d.dstRel, q.name) {
			return verdict{kept: true} // the walk's to remove or take up
		}
	}
	st, err := at.dir.Lstat(q.name)
	if err != nil {
		return verdict{kept: true} // gone
	}
	if proof.Excluded(at.srcRoot, q.srcRel, fileio.DirEntry{Name: q.name, Type: st.Type()}) {
		return verdict{kept: true} // excluded paths are kept (rsync's default)
	}
	if proof.History(q.rel) {
		return verdict{kept: true} // DEST's ASC MHL history, which the run extends
	}
	if st.Dev != at.dev || fileio.IsMountRoot(at.dir, q.name) {
		// Another filesystem, or a bind mount, below DEST: what is
		// there is not DEST's; never entered.
		return verdict{kept: true, why: "a mount point; unmount it or remove it yourself"}
	}
	if proof.Cache(at.dir, q.name, st) {
		return verdict{kept: true} // the hash cache's, left out of the source walk too
	}
	return verdict{st: st}
}
