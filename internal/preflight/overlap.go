package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/namefold"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// ArgPath is the path p a user gave (SOURCE, DEST, a flag's value) as the
// kernel resolves it. Without a ".." component it is p cleaned as text:
// that drops only "." and doubled or final separators, which the kernel
// ignores too, and keeps the user's spelling for messages. With one, it
// is fileio.Resolve's: "a/link/../d" is the link target's sibling d, as
// for ls and realpath, where filepath.Clean (and filepath.Abs, which
// cleans) would make it a/d, a directory the user never named. A ".."
// after a directory that does not exist yet is refused: where it leads is
// not known until that directory is made.
func ArgPath(p string) (string, error) {
	if !HasDotDot(p) {
		return filepath.Clean(p), nil
	}
	r, err := fileio.Resolve(p)
	if errors.Is(err, fileio.ErrUpFromMissing) {
		return "", refusal.New(p, `goes up ("..") from a directory that does not exist yet: where it leads is not known`, `create that directory first, or name the path without ".." after it`)
	}
	if err != nil {
		return "", refusal.New(p, "cannot resolve the path: "+refusal.Text(err), "check the path")
	}
	return r, nil
}

// HasDotDot reports whether the path p has a ".." component.
func HasDotDot(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// place is a path as the overlap checks see it: its nearest
// existing directory, open, and the part of the path below it that does
// not exist yet ("" when the path is that directory).
type place struct {
	d    *fileio.Dir
	dir  string // d's path, resolved
	tail string // slash-separated, resolved: no "." or ".."
}

// openPlace opens the place the path p names (resolved by the kernel,
// see ArgPath). A path that resolves nowhere is an error.
func openPlace(p string) (place, error) {
	r, err := fileio.Resolve(p)
	if err != nil {
		return place{}, err
	}
	var tail []string
	for at := r; ; {
		d, err := fileio.OpenDir(at)
		if err == nil {
			return place{d: d, dir: at, tail: strings.Join(tail, "/")}, nil
		}
		// Missing, a file, or not to be opened: the place is below
		// its parent.
		up := filepath.Dir(at) // r is resolved: no symlink or ".." left to cut as text
		if up == at {
			return place{}, err
		}
		tail = append([]string{filepath.Base(at)}, tail...)
		at = up
	}
}

func (o place) close() {
	if o.d != nil {
		o.d.Close()
	}
}

// within reports whether the place a is the place b or lies below
// it, by identity (fileio.Within): through symlinks, bind mounts and
// second mounts. A place not made yet lies below b when its existing
// directory does; only a place hanging from the same existing directory
// can lie in a b not made yet, and there its tail decides.
func within(a, b place) bool {
	if folded(a, b) {
		return true
	}
	if b.tail == "" {
		ok, _ := fileio.Within(a.d, b.d)
		return ok
	}
	as, err1 := a.d.Stat()
	bs, err2 := b.d.Stat()
	if err1 != nil || err2 != nil || as.Dev != bs.Dev || as.Ino != bs.Ino {
		return false
	}
	return a.tail == b.tail || strings.HasPrefix(a.tail, b.tail+"/")
}

// folded is the rule for filesystems whose inode numbers do not
// name a file (exFAT, FAT and NTFS through FUSE): exfat-fuse numbers each
// spelling of a directory afresh, so dst and DST of one drive are one
// place with two identities, and identity alone would take DST/old for a
// place outside dst. There a and b on one device are taken for one place
// when their paths are one under case folding, component by component,
// with a's at or below b's. It can only add a refusal: on a FUSE
// filesystem that keeps case, two directories whose names differ in case
// alone are refused as one, and the refusal names both.
func folded(a, b place) bool {
	as, err1 := a.d.Stat()
	bs, err2 := b.d.Stat()
	if err1 != nil || err2 != nil || as.Dev != bs.Dev {
		return false
	}
	t, err := fileio.FSType(b.dir)
	if err != nil || hashcache.PolicyFor(t).CheckInode {
		return false
	}
	ak, bk := foldKeys(a), foldKeys(b)
	if len(ak) < len(bk) {
		return false
	}
	for i := range bk {
		if ak[i] != bk[i] {
			return false
		}
	}
	return true
}

// foldKeys is the place's path, components folded as a
// case-insensitive destination compares names (namefold.Key).
func foldKeys(p place) []string {
	full := filepath.ToSlash(p.dir)
	if p.tail != "" {
		full += "/" + p.tail
	}
	var keys []string
	for _, c := range strings.Split(full, "/") {
		if c != "" {
			keys = append(keys, namefold.Key(c, true))
		}
	}
	return keys
}

// Inside reports whether the path a names the place the path b
// names or one inside it (within). A path that cannot be resolved
// or opened is an error.
func Inside(a, b string) (bool, error) {
	pa, err := openPlace(a)
	if err != nil {
		return false, err
	}
	defer pa.close()
	pb, err := openPlace(b)
	if err != nil {
		return false, err
	}
	defer pb.close()
	return within(pa, pb), nil
}

// Same reports whether the paths a and b name the same place.
func Same(a, b string) bool {
	in, err1 := Inside(a, b)
	out, err2 := Inside(b, a)
	return err1 == nil && err2 == nil && in && out
}

// In is Inside, false where a path cannot be resolved.
func In(a, b string) bool {
	in, err := Inside(a, b)
	return err == nil && in
}

// Apart refuses two destinations that are one directory, or one
// inside the other: the runs would copy into each other's copy and fight
// over one lock. Names are compared, and so are the directories that exist
// already, by identity: other spellings on a case-insensitive drive, or a
// bind mount, name one directory differently (Inside).
func Apart(a, b string) error {
	ra, rb := fileio.RealPath(a), fileio.RealPath(b)
	if ka, kb := namefold.Key(ra, true), namefold.Key(rb, true); ka == kb || Beneath(ka, kb) || Beneath(kb, ka) {
		// Maybe other spellings of one name on a drive that folds them.
		ra, rb = spelled(ra), spelled(rb)
	}
	switch {
	case ra == rb || sameDir(ra, rb) || Same(a, b):
		return refusal.New(b, "this destination is the same directory as "+quote(a), "name each destination once")
	case Beneath(ra, rb) || below(ra, rb) || In(b, a):
		return refusal.New(b, "this destination is inside the destination "+quote(a), "choose destinations apart from each other")
	case Beneath(rb, ra) || below(rb, ra) || In(a, b):
		return refusal.New(a, "this destination is inside the destination "+quote(b), "choose destinations apart from each other")
	}
	return nil
}

// spelled returns the real path p with each component that exists
// spelled as its directory lists it: a case-insensitive filesystem finds
// "backup" as "Backup", and so does this.
func spelled(p string) string {
	parts := strings.Split(strings.TrimPrefix(p, string(filepath.Separator)), string(filepath.Separator))
	cur := string(filepath.Separator)
	for i, name := range parts {
		next := filepath.Join(cur, name)
		if _, err := os.Lstat(next); err != nil {
			return filepath.Join(append([]string{cur}, parts[i:]...)...)
		}
		if ents, err := os.ReadDir(cur); err == nil && !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == name }) {
			k := namefold.Key(name, true)
			for _, e := range ents {
				if namefold.Key(e.Name(), true) == k {
					next = filepath.Join(cur, e.Name())
					break
				}
			}
		}
		cur = next
	}
	return cur
}

// sameDir reports whether a and b are one existing directory.
func sameDir(a, b string) bool {
	ai, aerr := os.Stat(a)
	bi, berr := os.Stat(b)
	return aerr == nil && berr == nil && os.SameFile(ai, bi)
}

// below reports whether an existing directory above p is dir.
func below(dir, p string) bool {
	di, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for cur := filepath.Dir(p); ; cur = filepath.Dir(cur) {
		if ci, err := os.Stat(cur); err == nil && os.SameFile(di, ci) {
			return true
		}
		if filepath.Dir(cur) == cur {
			return false
		}
	}
}

// Beneath reports whether the real path p lies below the real path dir.
func Beneath(dir, p string) bool {
	sep := string(filepath.Separator)
	return strings.HasPrefix(p, strings.TrimSuffix(dir, sep)+sep)
}
