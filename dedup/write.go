package dedup

import "github.com/fastcopy/fastcopy/verify"

// Write is what a file written under dedup owes the Index when its copy
// ends (End): a Register or Abandon after a Begin without a collision
// (Begun), or the target Find made for it (Claimed).
type Write struct {
	Begun   bool
	Claimed *Target
}

// Owed reports whether the file owes the Index an End.
func (w Write) Owed() bool { return w.Begun || w.Claimed != nil }

// Written is a file as its copy wrote it.
type Written struct {
	Rel  string
	Size int64
	Sum  verify.Sum
	Meta Meta
}

// End settles what w owes for a file announced with size: got is the file
// as written, nil when it was not. A file written whole (of that size and,
// when claimed, with the digest it was found by) is returned as the target
// later files share; otherwise its place is given up and End returns nil.
func (ix *Index) End(w Write, size int64, got *Written) *Target {
	switch {
	case w.Claimed != nil && got != nil && got.Size == size && got.Sum == w.Claimed.Sum:
		return w.Claimed
	case w.Claimed != nil:
		ix.Drop(w.Claimed) // not written, or not with the digest it was found by
		return nil
	case got == nil || got.Size != size:
		ix.Abandon(size)
		return nil
	}
	return ix.Register(got.Rel, size, got.Sum, got.Meta)
}
