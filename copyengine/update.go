package copyengine

import "github.com/fastcopy/fastcopy/verify"

// keepsExisting reports whether --ignore-existing or --update leaves the
// destination of en as it is: for --ignore-existing, any existing
// destination name of a source entry that is not a directory; for
// --update, a regular file whose destination is a regular file with a
// newer mtime, at the coarser resolution of the two filesystems (en.gran),
// so that a copy whose mtime its filesystem truncated never counts as
// newer. Such an entry is skipped whole: neither its data nor its
// metadata is touched.
func (dc *decider) keepsExisting(en *entry) bool {
	e := dc.e
	d := en.dstSt
	if d == nil || en.st.IsDir() {
		return false
	}
	if e.opt.IgnoreExisting {
		return true
	}
	if e.opt.Update && en.st.IsRegular() && d.IsRegular() {
		g := max(en.gran, 1)
		return floorDiv(d.Mtime, g) > floorDiv(en.st.Mtime, g)
	}
	return false
}

// keepExisting skips an entry keepsExisting leaves alone. The first name
// of a source inode with several (g) is then done, in place as the
// destination holds it: its further names are linked to it, unless they
// are left alone themselves.
func (dc *decider) keepExisting(en *entry, rel string, g *linkGroup) {
	dc.skip(rel, en.st.Size, false, verify.Sum{}) // left alone: its content is not known
	dc.e.mover.KeptInPlace()                      // --move: not moved
	if dc.e.scrub.found() {
		dc.e.scrub.leftAlone(dc.e.dstSide.Key(rel)) // a rotten one is not repaired
	}
	if g != nil {
		g.ok, g.ino = true, devIno{en.dstSt.Dev, en.dstSt.Ino}
		close(g.done)
	}
}
