package treeverify

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/namefold"
)

// pairing says where each source path is in a destination tree that may
// fold names (exFAT, NTFS under Windows, ext4 casefold, APFS): at its own
// path, at another spelling of it, or nowhere because another source name
// of its directory holds that destination name. It matches what the copy
// does (see copyengine's fold.go): of source names that are one name on the
// destination, the one whose exact spelling the destination holds is there,
// else the first in byte order; a source name the destination holds under
// another spelling only is that entry.
type pairing struct {
	dst  map[string]string // source path -> destination path, where they differ
	lost map[string]string // source path -> the source name that holds its destination name
	skip map[string]bool   // source paths below a lost directory: reported as the directory
}

// where returns the destination path of the source path p.
func (pr *pairing) where(p string) string {
	if d, ok := pr.dst[p]; ok {
		return d
	}
	return p
}

// pairTrees pairs the source tree se with the destination tree de (rooted at
// dd). Only a source path missing from de under its own spelling costs
// anything: the destination is asked for it by name (lstat), and an entry
// answering to it under another spelling, listed with the same
// namefold.Key, is where it went. Nothing is written: where several listed
// names could be that entry, the first in byte order is taken.
func pairTrees(dd *fileio.Dir, se, de map[string]treeEntry, mapName func(string) string) pairing {
	if mapName == nil {
		mapName = func(n string) string { return n }
	}
	pr := pairing{dst: map[string]string{}, lost: map[string]string{}, skip: map[string]bool{}}
	srcKids := children(se)
	var dstKids map[string][]string // built when first needed
	var resolve func(srcDir, dstDir string)
	resolve = func(srcDir, dstDir string) {
		names := srcKids[srcDir]
		sort.Strings(names)
		claimed := map[string]string{} // destination name -> source name
		var missing []string
		for _, n := range names {
			dn := mapName(n)
			if _, ok := de[join(dstDir, dn)]; ok {
				claimed[dn] = n
				if dstDir != srcDir || dn != n {
					pr.dst[join(srcDir, n)] = join(dstDir, dn)
				}
			} else {
				missing = append(missing, n)
			}
		}
		var d *fileio.Dir
		for _, n := range missing {
			if d == nil {
				var err error
				if d, err = dd.OpenBeneath(dstDir); err != nil {
					break // the directory itself is not there: all missing
				}
				defer d.Close()
			}
			dn := mapName(n)
			if _, err := d.Lstat(dn); err != nil {
				continue // not there under any spelling
			}
			if dstKids == nil {
				dstKids = children(de)
			}
			k := namefold.Key(dn, true)
			var cands []string
			for _, c := range dstKids[dstDir] {
				if namefold.Key(c, true) == k {
					cands = append(cands, c)
				}
			}
			if len(cands) == 0 {
				continue
			}
			sort.Strings(cands)
			t := cands[0]
			if by, ok := claimed[t]; ok {
				pr.lost[join(srcDir, n)] = by
				continue
			}
			claimed[t] = n
			pr.dst[join(srcDir, n)] = join(dstDir, t)
		}
		for _, n := range names {
			p := join(srcDir, n)
			if _, lost := pr.lost[p]; lost {
				markBelow(srcKids, p, pr.skip)
				continue
			}
			if se[p].typ == fileio.ModeDir {
				resolve(p, pr.where(p))
			}
		}
	}
	resolve("", "")
	return pr
}

// markBelow marks every source path below dir.
func markBelow(kids map[string][]string, dir string, m map[string]bool) {
	for _, n := range kids[dir] {
		p := join(dir, n)
		m[p] = true
		markBelow(kids, p, m)
	}
}

// children maps each directory path of a tree to its entries' names.
func children(t map[string]treeEntry) map[string][]string {
	out := map[string][]string{}
	for p := range t {
		dir, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			dir, name = p[:i], p[i+1:]
		}
		out[dir] = append(out[dir], name)
	}
	return out
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return path.Join(dir, name)
}

// lostDiff is the difference reported for a source path whose destination
// name another source name holds.
func lostDiff(p, by string) Diff {
	return Diff{Path: p, Kind: Missing, Detail: fmt.Sprintf("one name with %q on the destination, which does not tell them apart: not copied", by)}
}
