package copyengine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/internal/bagit"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
)

// --bag: DEST becomes a BagIt bag (RFC 8493) as it is copied.
//
// The copy is a copy into DEST/data, the bag's payload, with every rule of
// any copy (temporaries, read-back, flush, --delete, the hash cache, the
// lock, which is data/'s). Its manifest lists each payload file with the
// digest (sha256, or sha512) taken in the same read of its source as the
// xxh128 its read-back matched, or vouched for by the source's cache entry.
// Once the copy is in place and durable (and --delete has run), the tag
// files are written beside data/ by internal/bagit, each published whole.
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

// ErrBag is returned (wrapped, by a *BagError) by Run when a run with
// Options.Bag put its files in place but could not write the bag's tag
// files: the copy stands, the bag does not describe it.
var ErrBag = errors.New("the bag's tag files were not written")

// BagError says why a run's bag was not written.
type BagError struct {
	Bag string
	Err error
}

func (e *BagError) Error() string {
	return fmt.Sprintf("%q: the bag's tag files were not written: %s", e.Bag, ErrText(e.Err))
}

// Unwrap returns ErrBag and the cause.
func (e *BagError) Unwrap() []error { return []error{ErrBag, e.Err} }

// bagPayload is the folder of a bag's payload.
const bagPayload = "data"

// checkBag refuses what a BagIt bag cannot be made of, and makes Dest the
// bag's payload folder (once: Check runs again in Run).
func (o *Options) checkBag() error {
	if !o.Bag {
		if o.BagHash != "" || len(o.BagInfo) > 0 {
			return &RefusalError{Msg: "--bag-hash and --bag-info describe the bag --bag makes, and --bag was not given", Hint: "add --bag, or leave them out"}
		}
		return nil
	}
	switch o.bagFormat() {
	case "sha256", "sha512":
	default:
		return refuse(o.BagHash, "is not a BagIt manifest format fastcopy writes", "use sha256 or sha512")
	}
	if o.MHL {
		return &RefusalError{Msg: "--mhl would write DEST's ASC MHL history into the bag's payload (DEST/data/ascmhl), which the bag's manifest does not list", Hint: "make the bag and the history in separate runs, or leave one out"}
	}
	if _, err := o.bagFields(); err != nil {
		return &RefusalError{Msg: "--bag-info: " + err.Error(), Hint: "give each field as KEY=VALUE on one line, such as --bag-info Source-Organization=\"City Archives\""}
	}
	if o.bagRoot == "" && strings.TrimSpace(o.Dest) != "" {
		o.bagRoot = o.Dest
		o.Dest = filepath.Join(o.Dest, bagPayload)
	}
	return nil
}

// bagFormat is the format of the bag's manifests: BagHash, else
// ManifestHash when it is sha256 or sha512, else sha256.
func (o *Options) bagFormat() string {
	switch {
	case o.BagHash != "":
		return strings.ToLower(o.BagHash)
	case o.ManifestHash == "sha256" || o.ManifestHash == "sha512":
		return o.ManifestHash
	}
	return "sha256"
}

// bagFields parses BagInfo: "KEY=VALUE" (or "Key: value").
func (o *Options) bagFields() ([]bagit.WriteField, error) {
	var out []bagit.WriteField
	for _, kv := range o.BagInfo {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			k, v, ok = strings.Cut(kv, ":")
		}
		if !ok {
			return nil, fmt.Errorf("%q is not KEY=VALUE", kv)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := bagit.WriteCheckField(k, v); err != nil {
			return nil, err
		}
		out = append(out, bagit.WriteField{Label: k, Value: v})
	}
	return out, nil
}

// BagRoot is the bag a run with Bag makes (the Dest given), once Check
// made Dest its payload folder; "" otherwise.
func (o *Options) BagRoot() string { return o.bagRoot }

// prepareBag makes the bag's folder and its payload folder, so that the
// copy's sources (several, or a file) land in DEST/data as they would in
// a directory DEST; refuses a DEST that is no bag but holds files named
// as its tag files (the user's, which the bag would replace); and refuses
// a bag whose manifests are in another
// format than this run writes (they would keep listing what this run's no
// longer does). A dry run makes nothing.
func (o *Options) prepareBag() error {
	if !o.Bag || o.bagRoot == "" {
		return nil
	}
	if d, err := fileio.OpenDir(o.bagRoot); err == nil {
		foreign, ferr := bagit.WriteForeignTags(d)
		other, err := bagit.WriteOtherManifests(d, o.bagFormat())
		d.Close()
		if err == nil {
			err = ferr
		}
		if err != nil {
			return refuse(o.bagRoot, "cannot read the bag's folder: "+ErrText(err), "check it is a directory you can read")
		}
		if len(foreign) > 0 {
			return refuse(o.bagRoot, "is not a BagIt bag (it has no bagit.txt) but holds "+strings.Join(foreign, ", ")+": the bag's tag files would replace them", "move them out of the destination, or give --bag a new or empty destination")
		}
		if len(other) > 0 {
			return refuse(o.bagRoot, "the bag holds "+strings.Join(other, ", ")+", and this run writes manifest-"+o.bagFormat()+".txt", "rerun with --bag-hash "+bagOtherFormat(other[0]))
		}
	}
	if o.DryRun {
		return nil
	}
	if err := os.MkdirAll(o.Dest, 0o777); err != nil {
		return refuse(o.bagRoot, "cannot make the bag's payload folder: "+ErrText(err), "check the parent directory exists and is writable")
	}
	return nil
}

// bagOtherFormat is the format of a manifest's name.
func bagOtherFormat(name string) string {
	name = strings.TrimSuffix(name, ".txt")
	return name[strings.LastIndexByte(name, '-')+1:]
}

// writeBag writes the bag's tag files once the copy is in place and
// durable. A failure is kept in the summary (BagError) and in e.bagErr.
func (e *engine) writeBag() {
	if !e.opt.Bag || e.opt.DryRun || e.dstRoot == nil {
		return
	}
	w, err := e.writeBagFiles()
	if err != nil {
		e.bagErr = &BagError{Bag: e.opt.bagRoot, Err: err}
		e.sum.BagError = ErrText(err)
		return
	}
	e.sum.Bag, e.sum.BagOxum, e.sum.BagManifest = e.opt.bagRoot, w.Oxum, filepath.Join(e.opt.bagRoot, w.Manifest)
}

func (e *engine) writeBagFiles() (bagit.Written, error) {
	if err := e.sameDestPath(); err != nil {
		return bagit.Written{}, err
	}
	root, err := e.dstRoot.Parent()
	if err != nil {
		return bagit.Written{}, err
	}
	defer root.Close()
	if err := e.sameBagRoot(root); err != nil {
		return bagit.Written{}, err
	}
	format := e.opt.bagFormat()
	listed, err := e.listedLines(format)
	if err != nil {
		return bagit.Written{}, err
	}
	digests := make(map[string]string, len(listed))
	for _, l := range listed {
		digests[l.Path] = l.Digest
	}
	old, err := bagit.WriteReadManifest(root, format)
	if err != nil {
		return bagit.Written{}, err
	}
	var files []bagit.WriteFile
	err = e.bagWalk(e.dstRoot, "", func(rel string, st *fileio.Stat) {
		d, ok := digests[rel]
		if !ok {
			d, ok = old[rel]
		}
		if !ok {
			e.fail(rel, errors.New("in the bag's payload, but neither copied by this run nor listed in the bag's manifest: the bag would not validate; remove it, or copy it into the source and rerun"))
			return
		}
		files = append(files, bagit.WriteFile{Path: rel, Size: st.Size, Digest: d})
	})
	if err != nil {
		return bagit.Written{}, err
	}
	info, err := bagit.WriteReadInfo(root)
	if err != nil {
		return bagit.Written{}, err
	}
	given, _ := e.opt.bagFields() // checked by Check
	return bagit.Write(&bagit.WriteInput{
		Root:      root,
		Algorithm: format,
		Files:     files,
		Info:      bagMergeInfo(info, given),
		Agent:     strings.TrimSpace("fastcopy " + e.opt.MHLToolVersion),
		NoSync:    e.opt.NoSync,
	})
}

// sameBagRoot checks that the bag's path still leads to the directory
// above the payload folder the run copied into.
func (e *engine) sameBagRoot(root *fileio.Dir) error {
	at, err := fileio.OpenDir(e.opt.bagRoot)
	if err != nil {
		return err
	}
	st, err1 := at.Stat()
	at.Close()
	own, err2 := root.Stat()
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if st.Dev != own.Dev || st.Ino != own.Ino {
		return fmt.Errorf("%q is no longer the directory that holds the payload the run copied into", e.opt.bagRoot)
	}
	return nil
}

// bagWalk calls found for every regular file below d (the payload folder
// at rel), and fails by name each entry that is neither a directory nor a
// regular file. fastcopy's record of its temporaries in the payload
// folder (removed when the run ends with nothing to record) is passed
// over.
func (e *engine) bagWalk(d *fileio.Dir, rel string, found func(rel string, st *fileio.Stat)) error {
	ents, err := d.ReadDir()
	if err != nil {
		return err
	}
	for _, ent := range ents {
		if rel == "" && ent.Name == made.Name {
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
			err = e.bagWalk(sub, p, found)
			sub.Close()
			if err != nil {
				return err
			}
		case st.IsRegular():
			found(p, &st)
		default:
			e.fail(p, errors.New("in the bag's payload and not a regular file: a BagIt manifest lists files only; the bag would not validate with it"))
		}
	}
	return nil
}

// bagMergeInfo is the bag's bag-info.txt fields with those given on this
// run: a label given replaces every field of that label, in place of its
// first; new labels follow.
func bagMergeInfo(old, given []bagit.WriteField) []bagit.WriteField {
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
