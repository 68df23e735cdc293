package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/update"
	"github.com/fastcopy/fastcopy/verify"
)

// keepsExisting reports whether --ignore-existing or --update leaves the
// destination of en as it is (update.Config.Keeps): such an entry is
// skipped whole.
func (dc *decider) keepsExisting(en *entry) bool {
	e := dc.e
	return update.Config{IgnoreExisting: e.opt.IgnoreExisting, Update: e.opt.Update}.Keeps(&en.st, en.dstSt, en.gran)
}

// keepExisting skips an entry keepsExisting leaves alone. The first name
// of a source inode with several (g) is then done, in place as the
// destination holds it: its further names are linked to it, unless they
// are left alone themselves.
func (dc *decider) keepExisting(en *entry, rel string, g *linkGroup) {
	dc.skip(rel, en.st.Size, false, verify.Sum{}) // left alone: its content is not known
	dc.e.mover.KeptInPlace()                      // --move: not moved
	if dc.e.scrub.Found() {
		dc.e.scrub.LeftAlone(dc.e.dstSide.Key(rel)) // a rotten one is not repaired
	}
	if g != nil {
		g.ok, g.ino = true, devIno{en.dstSt.Dev, en.dstSt.Ino}
		close(g.done)
	}
}
