package records

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fastcopy/fastcopy/internal/bagit"
	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/preflight"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Options are what a run asks of its records, as the user gave them (the
// copy engine's options of the same names), with the few other options
// the records' checks look at.
type Options struct {
	Manifest     string   // the manifest file; "" for none
	ManifestHash string   // its digests' format ("": xxh128)
	MHL          bool     // record the run in DEST's ASC MHL history
	MHLHashes    []string // the generation's formats (nil: xxh128)
	// MHLToolVersion is the version written as the creator tool's (and
	// in a bag's Bag-Software-Agent).
	MHLToolVersion string
	Bag            bool     // make DEST a BagIt bag
	BagHash        string   // its manifest's format ("": BagFormat's choice)
	BagInfo        []string // bag-info.txt fields: "KEY=VALUE" or "Key: value"
	// Dest is the destination the run copies into. BagRoot is the bag
	// (the Dest given), once Check made Dest its payload folder.
	Dest, BagRoot string
	// Update and IgnoreExisting keep destination files that are not the
	// source's (-u, --ignore-existing).
	Update, IgnoreExisting bool
	DryRun                 bool // a dry run makes nothing
	NoSync                 bool // records are not flushed before they take their names
	VerifyOff              bool // the copies are not read back (--verify=off)
}

// BagPayload is the folder of a bag's payload.
const BagPayload = "data"

// Check refuses (refusal.Error) what the records asked for cannot hold,
// and makes Dest the bag's payload folder (once: a second Check leaves
// it): a history of the copy (MHL) cannot record honestly what -u and
// --ignore-existing keep, whose digests the run does not take; the
// formats must be ones each record is written in.
func (o *Options) Check() error {
	if o.MHL && (o.Update || o.IgnoreExisting) {
		return &refusal.Error{Msg: "--mhl records every source file as the copy holds it, which -u and --ignore-existing leave unread", Hint: "leave -u and --ignore-existing out, or --mhl"}
	}
	if o.ManifestHash != "" {
		const use = "use sha256, sha512, blake3, md5, sha1, xxh64, xxh3 or xxh128"
		f, ok := digest.Lookup(o.ManifestHash)
		if !ok {
			return refusal.New(o.ManifestHash, "is not a hash format fastcopy writes", use)
		}
		if f.Name == "c4" || f.Name == "xxh32" {
			return refusal.New(o.ManifestHash, "has no coreutils-style manifest", use)
		}
		if o.Manifest == "" && !o.Bag {
			return &refusal.Error{Msg: "--manifest-hash sets the format of --manifest (or of --bag's manifest), and neither was given", Hint: "add --manifest FILE, or leave --manifest-hash out"}
		}
	}
	if len(o.MHLHashes) > 0 {
		if !o.MHL {
			return &refusal.Error{Msg: "--mhl-hash sets the formats of --mhl's generation, and --mhl was not given", Hint: "add --mhl, or leave --mhl-hash out"}
		}
		if _, err := digest.Parse(strings.Join(o.MHLHashes, ",")); err != nil {
			return &refusal.Error{Msg: "--mhl-hash: " + err.Error(), Hint: "name formats of the ASC MHL specification: " + strings.Join(MHLFormats, ", ")}
		}
		for _, n := range o.MHLHashes {
			if !IsMHLFormat(n) {
				return refusal.New(n, "is not a hash format of the ASC MHL specification", "use "+strings.Join(MHLFormats, ", "))
			}
		}
	}
	return o.checkBag()
}

// checkBag refuses what a BagIt bag cannot be made of, and makes Dest the
// bag's payload folder.
func (o *Options) checkBag() error {
	if !o.Bag {
		if o.BagHash != "" || len(o.BagInfo) > 0 {
			return &refusal.Error{Msg: "--bag-hash and --bag-info describe the bag --bag makes, and --bag was not given", Hint: "add --bag, or leave them out"}
		}
		return nil
	}
	switch o.BagFormat() {
	case "sha256", "sha512":
	default:
		return refusal.New(o.BagHash, "is not a BagIt manifest format fastcopy writes", "use sha256 or sha512")
	}
	if o.MHL {
		return &refusal.Error{Msg: "--mhl would write DEST's ASC MHL history into the bag's payload (DEST/data/ascmhl), which the bag's manifest does not list", Hint: "make the bag and the history in separate runs, or leave one out"}
	}
	if _, err := o.BagFields(); err != nil {
		return &refusal.Error{Msg: "--bag-info: " + err.Error(), Hint: "give each field as KEY=VALUE on one line, such as --bag-info Source-Organization=\"City Archives\""}
	}
	if o.BagRoot == "" && strings.TrimSpace(o.Dest) != "" {
		o.BagRoot = o.Dest
		o.Dest = filepath.Join(o.Dest, BagPayload)
	}
	return nil
}

// ListsSums says whether the run lists the digest of every file it puts
// or finds in place: for a manifest, an ASC MHL generation or a bag.
func (o *Options) ListsSums() bool { return o.Manifest != "" || o.MHL || o.Bag }

// ManifestFormat is the format of the manifest's digests.
func (o *Options) ManifestFormat() string {
	if o.ManifestHash == "" {
		return XXH128
	}
	f, _ := digest.Lookup(o.ManifestHash)
	return f.Name
}

// MHLFormatNames are the formats of a new ASC MHL generation, in the
// order given (xxh128 when none is).
func (o *Options) MHLFormatNames() []string {
	if len(o.MHLHashes) == 0 {
		return []string{XXH128}
	}
	out := make([]string, 0, len(o.MHLHashes))
	for _, n := range o.MHLHashes {
		if f, ok := digest.Lookup(n); ok {
			out = append(out, f.Name)
		}
	}
	return out
}

// BagFormat is the format of the bag's manifests: BagHash, else
// ManifestHash when it is sha256 or sha512, else sha256.
func (o *Options) BagFormat() string {
	switch {
	case o.BagHash != "":
		return strings.ToLower(o.BagHash)
	case o.ManifestHash == "sha256" || o.ManifestHash == "sha512":
		return o.ManifestHash
	}
	return "sha256"
}

// BagFields parses BagInfo: "KEY=VALUE" (or "Key: value").
func (o *Options) BagFields() ([]bagit.WriteField, error) {
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

// ExtraFormats are the formats other than xxh128 the run's records need,
// computed as each source is read; nil when none is.
func (o *Options) ExtraFormats() []*digest.Format {
	var names []string
	if o.Manifest != "" || o.Bag {
		names = append(names, o.ManifestFormat())
	}
	if o.Bag {
		names = append(names, o.BagFormat())
	}
	if o.MHL {
		names = append(names, o.MHLFormatNames()...)
	}
	seen := map[string]bool{XXH128: true}
	var out []*digest.Format
	for _, n := range names {
		if f, ok := digest.Lookup(n); ok && !seen[f.Name] {
			seen[f.Name] = true
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PrepareBag makes the bag's folder and its payload folder, so that the
// copy's sources (several, or a file) land in DEST/data as they would in
// a directory DEST; refuses a DEST that is no bag but holds files named
// as its tag files (the user's, which the bag would replace); and refuses
// a bag whose manifests are in another
// format than this run writes (they would keep listing what this run's no
// longer does). A dry run makes nothing.
func (o *Options) PrepareBag() error {
	if !o.Bag || o.BagRoot == "" {
		return nil
	}
	if d, err := fileio.OpenDir(o.BagRoot); err == nil {
		foreign, ferr := bagit.WriteForeignTags(d)
		other, err := bagit.WriteOtherManifests(d, o.BagFormat())
		d.Close()
		if err == nil {
			err = ferr
		}
		if err != nil {
			return refusal.New(o.BagRoot, "cannot read the bag's folder: "+refusal.Text(err), "check it is a directory you can read")
		}
		if len(foreign) > 0 {
			return refusal.New(o.BagRoot, "is not a BagIt bag (it has no bagit.txt) but holds "+strings.Join(foreign, ", ")+": the bag's tag files would replace them", "move them out of the destination, or give --bag a new or empty destination")
		}
		if len(other) > 0 {
			return refusal.New(o.BagRoot, "the bag holds "+strings.Join(other, ", ")+", and this run writes manifest-"+o.BagFormat()+".txt", "rerun with --bag-hash "+BagOtherFormat(other[0]))
		}
	}
	if o.DryRun {
		return nil
	}
	if err := os.MkdirAll(o.Dest, 0o777); err != nil {
		return refusal.New(o.BagRoot, "cannot make the bag's payload folder: "+refusal.Text(err), "check the parent directory exists and is writable")
	}
	return nil
}

// CheckPlan refuses what the records cannot be written for in the run
// planned as p.
//
// A manifest whose directory is DEST or lies inside it is refused: there
// it is either a file the source does not have (a tree comparison counts
// it) or the name of a copy (the manifest replaces it). Strings cannot
// decide this: case folding, a symlink, a bind mount of DEST or of a
// directory in it, or a --names mapping reach one file by several
// spellings. So the manifest's nearest existing directory is compared
// with DEST by identity (checkOutside). It writes nothing, and a dry run
// refuses what the real run would.
//
// With MHL, a destination root that is not a folder the copy fills (a
// file SOURCE copied onto a file name: its directory is not the copy's)
// is refused, and so is a SOURCE that would land on DEST/ascmhl.
func (o *Options) CheckPlan(p preflight.Plan) error {
	if o.Manifest != "" {
		inside := func() error {
			return refusal.New(o.Manifest, "is inside the destination "+quote(p.DstRoot)+": the copy would count it as a file the source does not have, or it would replace a copy", "write the manifest outside the destination")
		}
		if err := checkOutside(o.Manifest, p.DstRoot, inside); err != nil {
			return err
		}
	}
	if !o.MHL {
		return nil
	}
	if p.OntoFile {
		return refusal.New(o.Dest, "--mhl records a folder's history, and this copies a file onto the name "+quote(o.Dest), "copy into a directory: fastcopy --mhl FILE DIR/")
	}
	for _, r := range p.Roots {
		if IsMHLFolder(r.DstRel) {
			return refusal.New(r.Src, "would land on "+quote(filepath.Join(p.DstRoot, MHLFolder))+", the folder of DEST's ASC MHL history", "copy it under another name, or leave --mhl out")
		}
	}
	return nil
}

// CheckLogPath refuses an audit log (--log) at path that lies inside the
// destination dstRoot, by whatever spelling (as CheckPlan does a
// manifest): the run would take it for a file the source lacks, and a
// later run from DEST would copy a file that grows as it is read.
func CheckLogPath(path, dstRoot string) error {
	return checkOutside(path, dstRoot, func() error {
		return refusal.New(path, "is inside the destination "+quote(dstRoot)+": the log would be written among the copies it describes", "write the log outside the destination")
	})
}

// checkOutside returns refusal() when the path lies in the directory
// dstRoot or is it, by identity (preflight.Inside: through symlinks, ".."
// as the kernel resolves it, bind mounts and second mounts), else nil.
// A path that goes up from a directory not made yet is refused as such.
func checkOutside(path, dstRoot string, refusal func() error) error {
	if _, err := preflight.ArgPath(path); err != nil {
		return err
	}
	if in, err := preflight.Inside(path, dstRoot); err == nil && in {
		return refusal()
	}
	return nil
}

func quote(s string) string { return `"` + s + `"` }
