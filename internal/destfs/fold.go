package destfs

// Destinations that fold names: exFAT, NTFS under Windows, FAT, APFS and
// HFS+ by default, ext4 and f2fs directories with the casefold attribute.
// There "README" and "readme" are one name, so two source files with those
// names would land on one destination file: the second would replace the
// first, and every rerun would swap them back.
//
// Whether a destination folds is asked of the destination itself, never
// guessed from its type: a probe (foldProbe) makes a private directory, creates
// a name in it and looks up the name's case-swapped and decomposed forms.
// The answer is kept per filesystem, and per filesystem for the directories
// that carry the casefold attribute (ext4's folding is a directory's
// attribute, its encoding the filesystem's).
//
// Before a directory's entries are written, its source names are grouped by
// namefold.Key (broad: Unicode case folding of upper case, after NFD where
// the destination normalises), and each group of two or more is put to the
// destination in the probe directory: the first name is created there and
// the second looked up. So the destination's own table decides (exFAT's
// up-case table, NTFS's $UpCase, the kernel's Unicode tables), and a name
// the key puts together but the destination keeps apart is copied. Of each
// set of source names that are one destination name, one is copied and the
// others fail by name (the run exits 3):
//
//   - the one whose exact spelling the destination holds already, so that a
//     rerun keeps what the first run copied and never flips;
//   - else the first in byte order ("README" before "readme").
//
// The one copied is compared with the destination file by content, never
// by size and mtime alone (FoldPlan.Contested): where the listing shows
// one spelling for whatever was created (lowntfs-3g -o ignore_case lists
// names in lower case), the winner can change from one run to the next,
// and the destination file then holds the other name's bytes.
//
// A source name that the destination holds under another spelling only
// (the source has "readme", the destination "README") lands on that
// destination entry, which keeps its spelling; but which file that entry
// is, is not known: it may be the copy of another source name, the only
// one left once --move removed that source (README and readme in one
// directory: the first run moves README and fails readme, whose rerun
// finds README). So such an entry, and every entry below a directory the
// destination holds so, is never replaced by other content: it is read on
// both sides and found in place when the digests are equal (a case-only
// rename), and fails by name otherwise (CollisionError, Held), its
// destination file left as it is (copyengine's decider.respelled);
// --delete keeps the extras of such a directory (mirrorDir.respelled).
// fastcopy verify matches names the same way.

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
	"golang.org/x/text/unicode/norm"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/namefold"
)

// FoldInfo is how a destination directory compares names.
type FoldInfo struct {
	Folds      bool // names that differ in case only are one name
	Normalises bool // names that differ in Unicode normalisation only are one name
	NormGuess  bool // Normalises was assumed, not seen (see LookFold)
	NoProbe    bool // a dry run: groups are not put to the destination (DryFold)
}

// On reports whether the directory folds names at all.
func (f FoldInfo) On() bool { return f.Folds || f.Normalises }

// String is how the directory compares names, in the words of
// CollisionError.How.
func (f FoldInfo) String() string {
	switch {
	case f.NormGuess:
	case f.Folds && f.Normalises:
		return "case- and normalisation-insensitive"
	case f.Normalises:
		return "normalisation-insensitive"
	}
	return "case-insensitive"
}

// foldCache is what the probes learnt of one filesystem: for directories
// without and with the casefold attribute.
type foldCache struct {
	mu     sync.Mutex
	known  [2]bool
	info   [2]FoldInfo
	fsType string // for messages, "" until asked
}

// FoldOf returns how the destination directory dd compares names: probed
// in dd the first time for its filesystem (and attribute), then from the
// cache. listing, dd's entries when known, lets the probe ask about names
// that are there already, writing nothing (see LookFold). A directory
// where the probe cannot be made (which then takes no file either) counts
// as not folding. A dry run puts no name to the destination (DryFold).
func (fi *Info) FoldOf(dd *fileio.Dir, listing []fileio.DirEntry) FoldInfo {
	if fi.cfg.dry() {
		return fi.DryFold(dd, listing)
	}
	if dd == nil {
		return FoldInfo{}
	}
	st, err := dd.Stat()
	if err != nil {
		return FoldInfo{}
	}
	i := 0
	if fileio.CaseFoldAttr(dd) {
		i = 1
	}
	fc := &fi.devs.get(st.Dev).fold
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.known[i] {
		return fc.info[i]
	}
	info, ok := LookFold(dd, listing)
	if !ok {
		// On DEST's own filesystem the probe is made in DEST's root
		// (unless case-folding is a directory attribute here), whichever
		// directory asks first, so that a rerun touches no other one.
		root := fi.cfg.Root
		pd := dd
		if root != nil && st.Dev == fi.rootDev && i == 0 && !fileio.CaseFoldAttr(root) {
			pd = root
		}
		var rec Recorder
		if pd == root {
			rec = fi.cfg.Made // a cut run's probe is then a leftover the next run may remove
		}
		var err error
		if info, err = probeFold(pd, rec); err != nil {
			return FoldInfo{}
		}
	}
	fc.known[i], fc.info[i] = true, info
	if info.On() && fc.fsType == "" {
		fc.fsType, _ = fileio.FSType(dd.Path())
		if fc.fsType == "" {
			fc.fsType = "unknown type"
		}
	}
	return info
}

// FoldFSType is the type name FoldOf (or NoteFoldFSType) noted for dd's
// filesystem, "unknown type" when dd cannot be asked.
func (fi *Info) FoldFSType(dd *fileio.Dir) string {
	st, err := dd.Stat()
	if err != nil {
		return "unknown type"
	}
	fc := &fi.devs.get(st.Dev).fold
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.fsType
}

// FSTypeOf is the type name FoldOf noted for the filesystem of the
// destination directory dd, for a collision's message: a dry run's
// directory not made (nil) is on DEST's filesystem, and DEST that would
// be made on its nearest existing parent's.
func (fi *Info) FSTypeOf(dd *fileio.Dir) string {
	if dd == nil {
		dd = fi.cfg.Root
	}
	if dd == nil && fi.cfg.dry() {
		if t, _ := fileio.FSType(fileio.NearestExisting(fi.cfg.RootPath)); t != "" {
			return t
		}
	}
	if dd == nil {
		return "unknown type"
	}
	return fi.FoldFSType(dd)
}

// NoteFoldFSType notes the type of the filesystem dev, as the filesystem
// of path names it, for FoldFSType, unless one is noted already: a dry
// run's folding, told without a probe, names the filesystem too.
func (fi *Info) NoteFoldFSType(dev uint64, path string) {
	fc := &fi.devs.get(dev).fold
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.fsType == "" {
		fc.fsType, _ = fileio.FSType(path)
	}
}

// The names the probe creates and looks up: an ASCII name with letters of
// both cases, and a name with "é" as one character (U+00E9).
const (
	probeCase    = "Fold-Probe"
	probeSwapped = "fOLD-pROBE"
	probeNFC     = "norm-\u00e9"
	probeNFD     = "norm-e\u0301"
)

// LookFold answers the probe's question without writing, from names dd
// holds already: a listed name whose case-swapped form is not listed is
// looked up in that form (found: the directory folds case; not found: it
// does not), and likewise a name with a character that decomposes, in its
// other normalisation form. ok is false when no listed name can tell
// whether case folds; where none can tell about normalisation, a
// directory that folds case is taken to normalise too, which only widens
// the groups that are then put to the destination itself.
func LookFold(dd *fileio.Dir, listing []fileio.DirEntry) (info FoldInfo, ok bool) {
	listed := make(map[string]bool, len(listing))
	for _, n := range listing {
		listed[n.Name] = true
	}
	ask := func(other func(string) string) (found, known bool) {
		tries := 0
		for _, n := range listing {
			o := other(n.Name)
			if o == n.Name || listed[o] || !utf8.ValidString(n.Name) {
				continue
			}
			_, err := dd.Lstat(o)
			switch {
			case err == nil:
				return true, true
			case fileio.IsNotExist(err):
				return false, true
			}
			if tries++; tries == 3 {
				break
			}
		}
		return false, false
	}
	var normKnown bool
	if info.Folds, ok = ask(swapCase); !ok {
		return FoldInfo{}, false
	}
	if info.Normalises, normKnown = ask(otherForm); !normKnown {
		info.Normalises, info.NormGuess = info.Folds, true
	}
	return info, true
}

// swapCase is s with the case of its ASCII letters swapped: every
// filesystem that folds case folds those, while a table may leave other
// letters out (exfat-fuse keeps "ǅ" and "Ǆ" apart), which would answer
// "does not fold" wrongly.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// otherForm is s decomposed (NFD), or composed (NFC) when it is decomposed
// already.
func otherForm(s string) string {
	if d := norm.NFD.String(s); d != s {
		return d
	}
	return norm.NFC.String(s)
}

// probeFold creates names in a private directory in dd and looks up their
// case-swapped and decomposed forms. A filesystem that cannot hold "é"
// (a FAT mount with an ASCII character set) is taken as not normalising.
func probeFold(dd *fileio.Dir, rec Recorder) (FoldInfo, error) {
	p, err := openProbe(dd, rec)
	if err != nil {
		return FoldInfo{}, err
	}
	defer p.close()
	var info FoldInfo
	if info.Folds, err = p.same(probeCase, probeSwapped); err != nil {
		return FoldInfo{}, err
	}
	info.Normalises, _ = p.same(probeNFC, probeNFD)
	return info, nil
}

// foldProbe is a private directory made in a destination directory to put
// names to its filesystem. Its name is a temporary's, so a run interrupted
// before removing it leaves it to the next run's cleanup, and it inherits
// the casefold attribute of the directory it is made in.
type foldProbe struct {
	parent *fileio.Dir
	name   string
	d      *fileio.Dir
	before fileio.Stat // parent's, to put its times back
	rec    Recorder    // where it is recorded as made (the destination root's probe), or nil
}

// openProbe makes the probe directory in dd. With rec (dd is the
// destination root), the directory is named in the record of what runs
// made before it is created, as a staged directory is, so that a run cut
// off while probing leaves a leftover the next run can prove its own and
// remove; a probe elsewhere is not recorded, and one a cut leaves is left
// alone (leave-temp).
func openProbe(dd *fileio.Dir, rec Recorder) (*foldProbe, error) {
	before, err := dd.Stat()
	if err != nil {
		return nil, err
	}
	for i := 0; i < 8; i++ {
		name := DigestTemp("case-probe", xxh3.HashString("case-probe\x00"+strconv.Itoa(i)))
		if rec != nil {
			rec.Before("", name, true)
		}
		err := dd.Mkdir(name, 0o700)
		if err != nil && rec != nil {
			rec.After(dd, "", name, nil, err)
		}
		if fileio.IsExist(err) {
			continue // a source entry of that name, copied already
		}
		if err != nil {
			return nil, err
		}
		if rec != nil {
			rec.After(dd, "", name, nil, nil)
		}
		d, err := dd.OpenSub(name)
		if err != nil {
			_ = dd.RemoveDir(name)
			return nil, err
		}
		return &foldProbe{parent: dd, name: name, d: d, before: before, rec: rec}, nil
	}
	return nil, errors.New("no free name for a probe directory")
}

// same reports whether a and b are one name to the probe's filesystem: a is
// created in the probe directory (where nothing else is) and looked up as b.
func (p *foldProbe) same(a, b string) (bool, error) {
	f, err := fileio.CreateTemp(p.d, a)
	if err != nil {
		return false, err
	}
	f.Close()
	defer p.d.Remove(a)
	_, err = p.d.Lstat(b)
	switch {
	case err == nil:
		return true, nil
	case fileio.IsNotExist(err):
		return false, nil
	}
	return false, err
}

// close removes the probe directory (a directory that another writer put
// something in stays, for the next run's cleanup) and puts the parent's
// times back, so that a directory that was up to date stays so.
func (p *foldProbe) close() {
	p.d.Close()
	if p.parent.RemoveDir(p.name) == nil && p.rec != nil {
		p.rec.Gone(p.name)
	}
	if after, err := p.parent.Stat(); err == nil && after.Mtime != p.before.Mtime {
		_ = p.parent.AsFile().SetTimes(p.before.Atime, p.before.Mtime)
	}
}

// FoldPlan is what a destination directory that folds names makes of a
// source directory's names.
type FoldPlan struct {
	Spelling map[string]string // source name -> the destination's spelling, where it differs
	Lost     map[string]string // source name -> the source name it is one name with, which is copied
	// Contested holds the source names copied for a set of names that are
	// one destination name (those in Lost's values). Which spelling the
	// destination shows is no proof of which file it holds (lowntfs-3g
	// with ignore_case lists every name in lower case), so such a file is
	// never found unchanged by size and mtime: both sides are read.
	Contested map[string]bool
}

// DstName is the name src takes in the destination directory.
func (fp *FoldPlan) DstName(src string) string {
	if s, ok := fp.Spelling[src]; ok {
		return s
	}
	return src
}

// PlanFold decides, for a destination directory dd that folds names as fi
// says, which of the source names (byte order not needed) are one name
// there, and which the destination holds under another spelling. dest is
// the destination directory's listing (nil for a directory this run made).
// Groups are confirmed in a probe directory in dd; where none can be made,
// a group of names with one key is taken as one name, which fails a file
// rather than losing one.
func PlanFold(dd *fileio.Dir, fi FoldInfo, src []string, dest []fileio.DirEntry) FoldPlan {
	pl := foldPlanner{dd: dd, fi: fi}
	bySrc := map[string][]string{}
	for _, n := range src {
		k := pl.key(n)
		bySrc[k] = append(bySrc[k], n)
	}
	pl.exact = make(map[string]bool, len(dest))
	pl.byDest = map[string][]string{}
	for _, d := range dest {
		pl.exact[d.Name] = true
		if k := pl.key(d.Name); bySrc[k] != nil {
			pl.byDest[k] = append(pl.byDest[k], d.Name)
		}
	}
	defer func() {
		if pl.probe != nil {
			pl.probe.close()
		}
	}()
	keys := make([]string, 0, len(bySrc))
	for k := range bySrc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		names := bySrc[k]
		if len(names) == 1 && (pl.exact[names[0]] || pl.byDest[k] == nil) {
			continue // the common case: nothing to share a name with
		}
		sort.Strings(names)
		classes := pl.classes(names)
		ds := pl.byDest[k]
		sort.Strings(ds)
		for _, c := range classes {
			pl.settle(c, ds)
		}
	}
	return pl.fp
}

// foldPlanner is what PlanFold works from: the destination directory, the
// names it lists (exact) and those of them with a source name's key
// (byDest), and the probe directory once one is made.
type foldPlanner struct {
	dd       *fileio.Dir
	fi       FoldInfo
	exact    map[string]bool
	byDest   map[string][]string
	probe    *foldProbe
	probeErr error
	fp       FoldPlan
}

func (pl *foldPlanner) key(s string) string { return namefold.Key(s, pl.fi.Normalises) }

// same reports whether a and b are one name in the destination directory.
func (pl *foldPlanner) same(a, b string) bool {
	if a == b {
		return true
	}
	// Read only where the destination can answer: one of the two is
	// listed, alone with its key, and the other is looked up.
	if pl.exact[b] {
		a, b = b, a
	}
	if ds := pl.byDest[pl.key(a)]; pl.dd != nil && pl.exact[a] && !pl.exact[b] && len(ds) == 1 {
		_, err := pl.dd.Lstat(b)
		if err == nil {
			return true
		}
		if fileio.IsNotExist(err) {
			return false
		}
	}
	if pl.probe == nil && pl.probeErr == nil && pl.dd != nil && !pl.fi.NoProbe {
		pl.probe, pl.probeErr = openProbe(pl.dd, nil)
	}
	if pl.probe == nil {
		return true // cannot ask: keep them apart by failing one
	}
	ok, err := pl.probe.same(a, b)
	return ok && err == nil // a name that cannot be made fails on its own
}

// classes sorts source names of one key into the sets that are one name.
func (pl *foldPlanner) classes(names []string) [][]string {
	var classes [][]string
next:
	for _, n := range names {
		for i, c := range classes {
			if pl.same(c[0], n) {
				classes[i] = append(c, n)
				continue next
			}
		}
		classes = append(classes, []string{n})
	}
	return classes
}

// settle picks the name of class c that is copied (the one the destination
// lists as it is, else the first), fails the others for it, and finds the
// spelling the destination holds it under among ds.
func (pl *foldPlanner) settle(c []string, ds []string) {
	fp := &pl.fp
	win := c[0]
	for _, n := range c {
		if pl.exact[n] {
			win = n
			break
		}
	}
	for _, n := range c {
		if n != win {
			if fp.Lost == nil {
				fp.Lost = map[string]string{}
			}
			fp.Lost[n] = win
		}
	}
	if len(c) > 1 {
		if fp.Contested == nil {
			fp.Contested = map[string]bool{}
		}
		fp.Contested[win] = true
	}
	if pl.exact[win] {
		return
	}
	for _, d := range ds {
		if pl.same(win, d) {
			if fp.Spelling == nil {
				fp.Spelling = map[string]string{}
			}
			fp.Spelling[win] = d
			break
		}
	}
}

// CollisionError is the failure of a source name that is one name, on the
// destination, with another name of its source directory: a destination
// that ignores case (or Unicode normalisation) holds one file for both. The
// other name is copied (see Winner); this one is not.
type CollisionError struct {
	Name   string // the source name that was not copied
	Winner string // the source name copied under that destination name
	Dest   string // the destination, as given
	FS     string // the destination filesystem's type
	How    string // "case-insensitive", ...
	// Held: Winner is not a source name but the entry DEST holds under
	// another spelling, whose content differs from the source's (Name and
	// Winner are then paths, relative to the source and to DEST).
	Held bool
}

func (e *CollisionError) Error() string {
	if e.Held {
		return fmt.Sprintf("not copied: %q would replace %q, which the %s destination filesystem of %q (%s) holds under another spelling, with other content; that file may be the only copy of another source file and was left as it is; rename %q in the source, or move %q out of the destination if it may be replaced",
			e.Name, e.Winner, e.How, e.Dest, e.FS, e.Name, e.Winner)
	}
	return fmt.Sprintf("not copied: %q and %q are one name on the %s destination filesystem of %q (%s); only %q is kept there; rename one of them in the source",
		e.Name, e.Winner, e.How, e.Dest, e.FS, e.Winner)
}

// Held is what a destination entry held under another spelling than its
// source's is found to be (Respelled).
type Held int

// The answers of Respelled.
const (
	// HeldOther: another type, size, target or device: the source entry
	// fails.
	HeldOther Held = iota
	// HeldSame: it holds what the source holds (a symlink with the same
	// target, a special file of the same type and device, an empty file
	// onto an empty file).
	HeldSame
	// HeldContested: a regular file of the same size: read on both sides,
	// it fails unless the digests are equal (neither size and mtime nor
	// DEST's cache entry are proof).
	HeldContested
)

// Respelled settles a source entry (lstat src) whose destination entry
// DEST holds under another spelling (lstat dst): "readme" onto "README",
// or a file below a directory held so. Which file DEST holds there is not
// known: it may be the copy of another source name, the only one left
// once --move removed that source ("README" and "readme" in one source
// directory: the first run moves README and fails readme; its rerun finds
// README). So it is never replaced by other content: an entry of another
// type or size fails at once; a regular file of the same size is read on
// both sides (HeldContested) and fails unless the digests are equal; a
// symlink with the same target (target is the source's, readlink reads
// the destination's), a special file of the same type and device, an
// empty file onto an empty file hold what the source holds (HeldSame).
func Respelled(src, dst *fileio.Stat, target string, readlink func() (string, error)) Held {
	if dst.Type() != src.Type() {
		return HeldOther
	}
	same := true
	switch {
	case src.IsRegular():
		if dst.Size != src.Size {
			return HeldOther
		}
		if src.Size > 0 {
			return HeldContested
		}
	case src.IsSymlink():
		t, err := readlink()
		same = err == nil && t == target
	case src.Type() == fileio.ModeChar || src.Type() == fileio.ModeBlock:
		same = dst.Rdev == src.Rdev
	}
	if !same {
		return HeldOther
	}
	return HeldSame
}
