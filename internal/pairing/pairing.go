package pairing

import (
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/namefold"
)

// Config is one directory's pairing's input, with Rules.
type Config struct {
	Src      []fileio.DirEntry // the source directory's names
	Excluded []bool            // one per Src: left out by the filters or the records
	// Listing is the destination directory's, when it existed.
	Listing []fileio.DirEntry
	// Fold is how the destination directory Dir folds names (zero: it
	// does not, or it is not asked); Dir is nil for one not made (a dry
	// run's), where PlanFold confirms nothing.
	Fold destfs.FoldInfo
	Dir  *fileio.Dir
}

// Rules are the run's judgements Pair asks of single names. They are
// apart from Config, which Pairs keeps parts of, so that they stay on the
// caller's stack.
type Rules struct {
	// Map gives a source name its name in the destination (the --names
	// rule), or why it cannot have one.
	Map func(name string) (string, error)
	// Ours reports whether the destination's entry name, named like a
	// temporary, is one a record shows a run made (made.Record.OursByName).
	Ours func(name string) bool
}

// Pairs is the pairing of a source directory's entries with the
// destination's, one element of each slice per source name.
type Pairs struct {
	DstNames  []string // each source name's name in the destination
	Errs      []error  // why a source name cannot have one
	Lost      []string // the source name that holds this one's destination name
	Contested []bool   // several source names are this one's destination name
	Respelled []bool   // the destination holds the name under another spelling
	// Fold is how the destination folds names, when it does.
	Fold     *destfs.FoldInfo
	excluded []bool
	tempLike map[string]bool // destination names that are temporaries' names (Key)
}

// Pair maps each source name to its destination name, or why it cannot
// have one: before anything of the directory is written.
func Pair(c Config, r Rules) Pairs {
	p := Pairs{DstNames: make([]string, len(c.Src)), Errs: make([]error, len(c.Src)), excluded: c.Excluded}
	mapped := false
	for i, n := range c.Src {
		p.DstNames[i], p.Errs[i] = r.Map(n.Name)
		mapped = mapped || p.DstNames[i] != n.Name
	}
	if mapped {
		destfs.Collisions(c.Src, p.DstNames, p.Errs, c.Excluded)
	}
	p.fold(c)
	// Destination names that are temporaries' names ("a" beside
	// ".a.fastcopy-tmp"): their neighbours get other temporaries, so that
	// writing one never removes or replaces the copy of the other. On a
	// destination that folds names, a name that folds to a temporary's
	// counts too.
	for _, n := range p.DstNames {
		if destfs.IsTempName(n) {
			p.takeTempName(n)
		}
	}
	// So are the destination's own entries named like temporaries that no
	// record shows a run made (internal/made): the user's, whatever their name.
	for _, n := range c.Listing {
		if destfs.IsTempName(n.Name) && !r.Ours(n.Name) {
			p.takeTempName(n.Name)
		}
	}
	return p
}

// fold finds which of the destination names are one name on a
// destination that folds them (destfs.PlanFold), and the spelling the
// destination holds.
func (p *Pairs) fold(c Config) {
	n := len(c.Src)
	p.Lost = make([]string, n)
	p.Contested = make([]bool, n)
	p.Respelled = make([]bool, n)
	if !c.Fold.On() {
		return
	}
	p.Fold = &destfs.FoldInfo{}
	*p.Fold = c.Fold
	var cands []string
	for i := range c.Src {
		if !c.Excluded[i] && p.Errs[i] == nil {
			cands = append(cands, p.DstNames[i])
		}
	}
	fp := destfs.PlanFold(c.Dir, c.Fold, cands, c.Listing)
	for i := range c.Src {
		if win, ok := fp.Lost[p.DstNames[i]]; ok {
			p.Lost[i] = win
		}
		p.Contested[i] = fp.Contested[p.DstNames[i]]
		_, p.Respelled[i] = fp.Spelling[p.DstNames[i]]
		p.DstNames[i] = fp.DstName(p.DstNames[i])
	}
}

// takeTempName notes the destination name n as one no temporary takes.
func (p *Pairs) takeTempName(n string) {
	if p.tempLike == nil {
		p.tempLike = map[string]bool{}
	}
	p.tempLike[p.Key(n)] = true
}

// Key is what two destination names that are one there share.
func (p *Pairs) Key(s string) string {
	if p.Fold != nil {
		return namefold.Key(s, p.Fold.Normalises)
	}
	return s
}

// Taken reports whether t is, or folds to, a destination name that is a
// temporary's.
func (p *Pairs) Taken(t string) bool { return p.tempLike[p.Key(t)] }

// Tmp is the temporary the destination name name is written under when
// its usual one (destfs.TempName) is taken, and "" when it is not.
func (p *Pairs) Tmp(name string) string {
	if p.Taken(destfs.TempName(name)) {
		return destfs.FreeTempName(name, p.Taken)
	}
	return ""
}

// TempName is the temporary the destination name name is written under.
func (p *Pairs) TempName(name string) string {
	if t := p.Tmp(name); t != "" {
		return t
	}
	return destfs.TempName(name)
}

// Out reports whether source entry i is not copied: left out, without a
// destination name, or one name with another that is copied.
func (p *Pairs) Out(i int) bool {
	return p.excluded[i] || p.Errs[i] != nil || p.Lost[i] != ""
}

// Refused says why source entry i, not left out, is not copied: err for a
// name the destination cannot hold or one that is the record's name
// (made.ErrName), winner for the source name it is one name with, which
// is copied (the caller words the collision).
func (p *Pairs) Refused(i int) (winner string, err error) {
	if p.Errs[i] != nil {
		return "", p.Errs[i]
	}
	if p.Lost[i] != "" {
		return p.Lost[i], nil
	}
	if p.Key(p.DstNames[i]) == p.Key(made.Name) {
		// The record's name, at any depth: a copy of it below the root
		// would be taken for the record of a later run into that
		// directory, and its names for that run's leftovers.
		return "", made.ErrName
	}
	return "", nil
}
