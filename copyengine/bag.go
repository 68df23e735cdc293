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
	"github.com/fastcopy/fastcopy/internal/records"
)

// --bag: DEST becomes a BagIt bag (RFC 8493) as it is copied.
//
// The copy is a copy into DEST/data, the bag's payload, with every rule of
// any copy (temporaries, read-back, flush, --delete, the hash cache, the
// lock, which is data/'s). Its manifest lists each payload file with the
// digest (sha256, or sha512) taken in the same read of its source as the
// xxh128 its read-back matched, or vouched for by the source's cache entry.
// Once the copy is in place and durable (and --delete has run), the tag
// files are written beside data/ by internal/records (records.Bag) through
// internal/bagit, each published whole.
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
			return refuse(o.bagRoot, "the bag holds "+strings.Join(other, ", ")+", and this run writes manifest-"+o.bagFormat()+".txt", "rerun with --bag-hash "+records.BagOtherFormat(other[0]))
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

// writeBag writes the bag's tag files (records.Bag) once the copy is in
// place and durable. A failure is kept in the summary (BagError) and in
// rk.bagErr.
func (rk *recordKeeper) writeBag() {
	e := rk.e
	if !e.opt.Bag || e.skipWrite() || e.dstRoot == nil {
		return
	}
	given, _ := e.opt.bagFields() // checked by Check
	b := records.Bag{
		Payload:     e.dstRoot,
		PayloadPath: e.dstRootPath,
		Root:        e.opt.bagRoot,
		Format:      e.opt.bagFormat(),
		Info:        given,
		Agent:       strings.TrimSpace("fastcopy " + e.opt.MHLToolVersion),
		NoSync:      e.opt.NoSync,
		Skip:        made.Name,
	}
	w, failed, err := b.Write(&rk.set)
	rk.failAll(failed)
	if err != nil {
		rk.bagErr = &BagError{Bag: e.opt.bagRoot, Err: err}
		e.sum.BagError = ErrText(err)
		return
	}
	e.sum.Bag, e.sum.BagOxum, e.sum.BagManifest = e.opt.bagRoot, w.Oxum, filepath.Join(e.opt.bagRoot, w.Manifest)
}
