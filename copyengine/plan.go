package copyengine

import (
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/preflight"
)

// rootSpec is one SOURCE argument mapped onto the destination
// (preflight.Root), with the hash cache's side of its source.
type rootSpec struct {
	src    string // the source path as given (cleaned)
	isDir  bool
	srcDir string // the directory walked (isDir) or holding the file
	name   string // for a file: its name in srcDir
	dstRel string // where it lands, relative to the destination root
	side   cacheSide
}

// plan is what Run decided from the arguments before writing anything
// (preflight.Plan).
type plan struct {
	dstRoot string // an existing (or to be created) directory
	create  bool   // dstRoot must be created
	// ontoFile: one file SOURCE copied onto the file name DEST (dstRoot
	// is the directory that holds it).
	ontoFile bool
	roots    []rootSpec
}

// makePlan applies the argument rules (preflight.Make) and refuses bad
// requests up front.
func makePlan(sources []string, dest string) (*plan, error) {
	pp, err := preflight.Make(preflight.Config{Sources: sources, Dest: dest})
	if err != nil {
		return nil, err
	}
	p := &plan{dstRoot: pp.DstRoot, create: pp.Create, ontoFile: pp.OntoFile}
	for _, r := range pp.Roots {
		p.roots = append(p.roots, rootSpec{src: r.Src, isDir: r.IsDir, srcDir: r.SrcDir, name: r.Name, dstRel: r.DstRel, side: hashcache.SideOf(r.SrcDir)})
	}
	return p, nil
}

// preflightRoots is p's roots as package preflight takes them.
func (p *plan) preflightRoots() []preflight.Root {
	roots := make([]preflight.Root, len(p.roots))
	for i, r := range p.roots {
		roots[i] = preflight.Root{Src: r.src, IsDir: r.isDir, SrcDir: r.srcDir, Name: r.name, DstRel: r.dstRel}
	}
	return roots
}
