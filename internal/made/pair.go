package made

import "github.com/fastcopy/fastcopy/internal/fileio"

// Pair is an existing destination directory's listing paired with the
// source directory's names, as a run about to write in it finds it: the
// whole input of Record.Pair.
type Pair struct {
	Dir      *fileio.Dir       // the destination directory
	DirRel   string            // its path below the destination root
	Listing  []fileio.DirEntry // its entries
	Src      []fileio.DirEntry // the source directory's
	DstNames []string          // each source name's name in the destination
	// Temp is the temporary a copy onto the destination name is written
	// under; IsTemp says whether a name is named like a temporary.
	Temp   func(dstName string) string
	IsTemp func(name string) bool
	Resume bool // a source file's leftover temporary is kept to take up
}

// Found is what Record.Pair finds in a destination directory.
type Found struct {
	Stats map[string]fileio.Stat // the entries the source's names get there
	Kept  map[string]string      // destination name -> its leftover temporary, to take up or remove
	// Leftovers are the entries named like temporaries that the source
	// lacks, in listing order: a run's (Ours) to remove, or the user's
	// (or one whose record a crash lost), never removed or taken up.
	Leftovers []Leftover
}

// Leftover is an entry of a destination directory named like a
// temporary that is no source name's.
type Leftover struct {
	Entry fileio.DirEntry
	Ours  bool // a run recorded it: a leftover to remove
}

// Pair goes through an existing destination directory's listing: it
// drops from the record what the directory's listing shows gone
// (DropNested), disowns the recorded names that source files are about to
// be copied to, and answers the metadata of the names the source's
// entries get there, the leftover temporaries of a source's regular
// files that a resume takes up (Kept, the run's own as regular files
// only), and the other entries named like temporaries (Leftovers). The
// caller removes, reports or takes them up.
func (m *Record) Pair(p Pair) Found {
	var f Found
	if len(p.Listing) == 0 {
		return f
	}
	if p.DirRel != "" {
		m.DropNested(p.Dir, p.DirRel, p.Listing)
	}
	inSrc := make(map[string]bool, len(p.Src))
	var tempOf map[string]string // temporary -> destination name of a source file
	var disown []string          // recorded as made, about to take a source file's copy
	for i, n := range p.Src {
		name := p.DstNames[i]
		inSrc[name] = true
		if m.Recorded(joinRel(p.DirRel, name)) {
			disown = append(disown, joinRel(p.DirRel, name))
		}
		if n.Type == fileio.ModeRegular && p.Resume {
			if tempOf == nil {
				tempOf = map[string]string{}
			}
			tempOf[p.Temp(name)] = name
		}
	}
	m.Disown(disown)
	f.Stats = make(map[string]fileio.Stat)
	for _, n := range p.Listing {
		if inSrc[n.Name] {
			if st, err := p.Dir.Lstat(n.Name); err == nil {
				f.Stats[n.Name] = st
			}
			continue
		}
		if !p.IsTemp(n.Name) {
			continue
		}
		if !m.OursByName(p.Dir, p.DirRel, n.Name) {
			f.Leftovers = append(f.Leftovers, Leftover{Entry: n})
			continue
		}
		if of, ok := tempOf[n.Name]; ok && n.Type == fileio.ModeRegular {
			if f.Kept == nil {
				f.Kept = map[string]string{}
			}
			f.Kept[of] = n.Name
			continue
		}
		f.Leftovers = append(f.Leftovers, Leftover{Entry: n, Ours: true})
	}
	return f
}
