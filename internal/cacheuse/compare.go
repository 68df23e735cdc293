package cacheuse

import (
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Pair is the input of Compare: a regular source file and the regular
// file its destination holds, with what the cache answered for them.
type Pair struct {
	Src, Dst *fileio.Stat
	Gran     int64 // the resolution (ns) their mtimes are compared at
	// Answer is the cache's answer (nil: no cache, or one that cannot
	// vouch for either side); Moved is Answer.Moved, kept by the caller
	// where the cache vouches for the source only.
	Answer *Answer
	Moved  bool
	// Contested: the destination file may hold another source name's
	// bytes (destfs.FoldPlan.Contested).
	Contested bool
	Checksum  bool // --checksum: the rsync rule does not apply
	// Lists: a record lists the source's digest (a manifest, an ASC MHL
	// generation), and a destination file with another is not the same
	// file.
	Lists bool
}

// Kind is what Compare found.
type Kind int8

const (
	// Differs: the destination does not hold the source's content, or
	// nothing says it does: it is copied.
	Differs Kind = iota
	// Holds: the destination holds the source's content: it is kept,
	// its mtime set to the source's where Verdict.FixTimes.
	Holds
	// Unsure: the stats and the cache cannot settle it: both sides are
	// read (Check).
	Unsure
)

// Verdict is Compare's answer.
type Verdict struct {
	Kind Kind
	// FixTimes: Holds, and the destination's mtime differs from the
	// source's: it is set, and the file's new state recorded with
	// TimesSum, the digest the cache vouched for.
	FixTimes bool
	TimesSum verify.Sum
	Hits     int64 // digests the cache answered
}

// Compare decides, for a destination file as large as its source,
// whether it already holds the source's content without reading either
// when it can: both cache entries valid and equal. Without a cache, or
// where it cannot vouch for either side (see Lookup), the rsync rule
// applies (same size and mtime), unless --checksum. It changes nothing.
func Compare(p Pair) Verdict {
	d, s := p.Dst, p.Src
	if d.Size != s.Size {
		return Verdict{Kind: Differs}
	}
	same := hashcache.SameTime(d.Mtime, s.Mtime, p.Gran)
	c := p.Answer
	switch {
	case p.Contested && s.Size > 0:
		// The destination file may hold the other name's bytes: read
		// it, whatever its mtime or the cache says.
		return Verdict{Kind: Unsure}
	case s.Size == 0:
		// Two empty files hold the same (no) bytes: nothing to remember or
		// read, whatever the cache says.
		return Verdict{Kind: Holds, FixTimes: !same}
	case p.Moved && same:
		// The source changed since it was last read, which DEST's coarse
		// times cannot show (Lookup): read both.
		return Verdict{Kind: Unsure}
	case c == nil:
		// A record listing the source's digest wants both read.
		if p.Checksum || p.Lists {
			return Verdict{Kind: Unsure}
		}
		if same {
			return Verdict{Kind: Holds}
		}
		return Verdict{Kind: Differs}
	case c.SrcOK && c.DstOK:
		if c.Src != c.Dst {
			return Verdict{Kind: Differs}
		}
		// Where the mtime differs, the entry vouches that the file's data
		// was flushed: its new state is recorded at once (FixTimes).
		return Verdict{Kind: Holds, Hits: 2, FixTimes: !same, TimesSum: c.Dst}
	case !same && !c.DstOK && !p.Checksum:
		return Verdict{Kind: Differs} // the rsync rule: another mtime and nothing vouching otherwise
	}
	return Verdict{Kind: Unsure}
}
