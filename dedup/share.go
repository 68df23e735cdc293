package dedup

// Way is how a duplicate is placed: by a clone of its target's blocks, by a
// hard link to the target's inode, or by a copy of its own.
type Way int

// The ways a duplicate is placed.
const (
	Copied Way = iota // nothing to share safely: an ordinary copy
	Cloned            // a reflink: the files share blocks and stay independent
	Linked            // a hard link: one inode, so one set of metadata
)

// Dest is what the destination can do and what the run allows there, as
// data: the decisions below read nothing else.
type Dest struct {
	Mode Mode
	// NoReflink is --reflink=never: no clone is ever made.
	NoReflink bool
	// CannotClone says the destination's filesystem does not clone: a
	// clone failed there earlier in the run or, in a dry run, which tries
	// none, its type is not one that clones.
	CannotClone bool
	// HasLinks says whether the destination's filesystem has hard links
	// (not FAT or exFAT); nil for none. It is asked only once a hard link
	// is the way left, since the answer may cost a probe in DEST.
	HasLinks func() bool
}

// TriesClone reports whether a duplicate is first cloned: --dedup auto or
// clone, clones allowed, and none known to fail here.
func (d Dest) TriesClone() bool {
	return d.Mode != Hardlink && !d.NoReflink && !d.CannotClone
}

// LinkOnly reports whether duplicates can only be hard-linked here (so a
// target is of use only with the same metadata): --dedup=hardlink, or
// --dedup=auto where cloning is off or known not to work. A duplicate
// matched to a target it cannot share with would wait for the end of the
// run and be copied then, one file and one flush at a time.
func (d Dest) LinkOnly() bool {
	if d.Mode == Hardlink {
		return true
	}
	return d.Mode == Auto && (d.CannotClone || d.NoReflink)
}

// MayLink reports whether a duplicate that was not cloned (TriesClone
// false, or the clone fell back) may be hard-linked, metadata permitting.
// When it may not, note is what the summary says of it ("" for nothing):
// never a hard link under --dedup=clone, also when an earlier file found
// that this filesystem cannot clone, and none where there are no hard
// links.
func (d Dest) MayLink() (ok bool, note string) {
	if d.Mode == Clone && d.CannotClone {
		return false, "the destination filesystem cannot clone; duplicates were copied"
	}
	if d.HasLinks == nil || !d.HasLinks() {
		if d.Mode == Hardlink {
			return false, "the destination filesystem has no hard links; duplicates were copied"
		}
		return false, ""
	}
	return true, ""
}

// Way is the whole decision for a duplicate whose target is proven to hold
// its bytes, where nothing is tried (a dry run): a clone where the
// destination clones (auto, clone), else a hard link when the metadata the
// copy would carry is the target's (sameMeta; auto, hardlink), else a copy.
// --dedup=clone with --reflink=never is refused before a run, so the real
// run's order (TriesClone, then MayLink) comes to the same answer.
func (d Dest) Way(sameMeta bool) Way {
	if d.TriesClone() {
		return Cloned
	}
	if ok, _ := d.MayLink(); !ok || d.Mode == Clone || !sameMeta {
		return Copied
	}
	return Linked
}
