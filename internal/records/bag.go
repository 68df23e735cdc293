package records

import (
	"errors"
	"strings"

	"github.com/fastcopy/fastcopy/internal/bagit"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// --bag: DEST becomes a BagIt bag (RFC 8493) as it is copied.
//
// The copy is a copy into DEST/data, the bag's payload, with every rule of
// any copy (temporaries, read-back, flush, --delete, the hash cache, the
// lock, which is data/'s). Its manifest lists each payload file with the
// digest (sha256, or sha512) taken in the same read of its source as the
// xxh128 its read-back matched, or vouched for by the source's cache entry.
// Once the copy is in place and durable (and --delete has run), the tag
// files are written beside data/ (Bag.Write) through internal/bagit, each
// published whole.
//
// A rerun brings the bag up to date: new and changed files are copied and
// listed with their new digests, unchanged ones listed again with theirs.
// A payload file this run did not list (the source no longer has it and
// --delete was not given) keeps the line the bag's manifest had for it: it
// is what an earlier run copied and vouched for, and data/ still holds it,
// so the manifest still lists all that data/ holds. With --delete such a
// file is removed and its line dropped. A payload entry that neither this
// run nor the bag's manifest vouches for (a file put into data/ by hand,
// a symlink) fails by name: the bag would not validate with it.

// Bag is the BagIt bag (RFC 8493) a run makes of its destination
// (--bag): the payload folder Payload (DEST/data, which the run holds and
// whose path is PayloadPath) inside the bag's folder Root.
type Bag struct {
	Payload     *fileio.Dir
	PayloadPath string
	Root        string
	Format      string             // the manifests' format: sha256 or sha512
	Info        []bagit.WriteField // bag-info.txt fields given for this run
	Agent       string             // Bag-Software-Agent
	NoSync      bool
	// Skip is a name at the payload's top that is not payload: the
	// engine's record of its temporaries, removed when the run ends with
	// nothing to record.
	Skip string
}

// Write writes the bag's tag files once the copy is in place and
// durable. Its manifest lists each payload file: with the digest s lists
// it with, else (a file this run did not list: the source no longer has
// it, and --delete was not given) with the line the bag's manifest had
// for it. A payload entry neither vouches for (a file put into the
// payload by hand, a symlink) is left out and returned among the
// failures, as is a file s lists without a digest in Format: the bag
// would not validate with it.
func (b *Bag) Write(s *Set) (bagit.Written, []Failure, error) {
	if err := SameDir(b.PayloadPath, b.Payload, "the directory the run copied into"); err != nil {
		return bagit.Written{}, nil, err
	}
	root, err := b.Payload.Parent()
	if err != nil {
		return bagit.Written{}, nil, err
	}
	defer root.Close()
	if err := SameDir(b.Root, root, "the directory that holds the payload the run copied into"); err != nil {
		return bagit.Written{}, nil, err
	}
	listed, failed := s.Lines(b.Format)
	digests := make(map[string]string, len(listed))
	for _, l := range listed {
		digests[l.Path] = l.Digest
	}
	old, err := bagit.WriteReadManifest(root, b.Format)
	if err != nil {
		return bagit.Written{}, failed, err
	}
	var files []bagit.WriteFile
	err = b.walk(b.Payload, "", &failed, func(rel string, st *fileio.Stat) {
		d, ok := digests[rel]
		if !ok {
			d, ok = old[rel]
		}
		if !ok {
			failed = append(failed, Failure{rel, errors.New("in the bag's payload, but neither copied by this run nor listed in the bag's manifest: the bag would not validate; remove it, or copy it into the source and rerun")})
			return
		}
		files = append(files, bagit.WriteFile{Path: rel, Size: st.Size, Digest: d})
	})
	if err != nil {
		return bagit.Written{}, failed, err
	}
	info, err := bagit.WriteReadInfo(root)
	if err != nil {
		return bagit.Written{}, failed, err
	}
	w, err := bagit.Write(&bagit.WriteInput{
		Root:      root,
		Algorithm: b.Format,
		Files:     files,
		Info:      MergeBagInfo(info, b.Info),
		Agent:     b.Agent,
		NoSync:    b.NoSync,
	})
	return w, failed, err
}

// walk calls found for every regular file below d (the payload folder at
// rel), and adds to failed each entry that is neither a directory nor a
// regular file. Skip at the payload's top is passed over.
func (b *Bag) walk(d *fileio.Dir, rel string, failed *[]Failure, found func(rel string, st *fileio.Stat)) error {
	ents, err := d.ReadDir()
	if err != nil {
		return err
	}
	for _, ent := range ents {
		if rel == "" && ent.Name == b.Skip {
			continue
		}
		p := joinRel(rel, ent.Name)
		st, err := d.Lstat(ent.Name)
		if err != nil {
			return err
		}
		switch {
		case st.IsDir():
			sub, err := d.OpenSub(ent.Name)
			if err != nil {
				return err
			}
			err = b.walk(sub, p, failed, found)
			sub.Close()
			if err != nil {
				return err
			}
		case st.IsRegular():
			found(p, &st)
		default:
			*failed = append(*failed, Failure{p, errors.New("in the bag's payload and not a regular file: a BagIt manifest lists files only; the bag would not validate with it")})
		}
	}
	return nil
}

// MergeBagInfo is the bag's bag-info.txt fields old with those given on
// this run: a label given replaces every field of that label, in place of
// its first; new labels follow.
func MergeBagInfo(old, given []bagit.WriteField) []bagit.WriteField {
	byLabel := map[string][]bagit.WriteField{}
	var order []string
	for _, g := range given {
		k := strings.ToLower(g.Label)
		if _, ok := byLabel[k]; !ok {
			order = append(order, k)
		}
		byLabel[k] = append(byLabel[k], g)
	}
	var out []bagit.WriteField
	done := map[string]bool{}
	for _, f := range old {
		k := strings.ToLower(f.Label)
		if g, ok := byLabel[k]; ok {
			if !done[k] {
				out = append(out, g...)
				done[k] = true
			}
			continue
		}
		out = append(out, f)
	}
	for _, k := range order {
		if !done[k] {
			out = append(out, byLabel[k]...)
		}
	}
	return out
}

// BagOtherFormat is the format of a manifest's name (manifest-md5.txt:
// md5).
func BagOtherFormat(name string) string {
	name = strings.TrimSuffix(name, ".txt")
	return name[strings.LastIndexByte(name, '-')+1:]
}
