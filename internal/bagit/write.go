package bagit

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Writing a bag. The payload is the copy's: its files are already under
// data/, each with a digest the copy computed while it read the source
// and matched by the read-back. Write adds the tag files beside data/:
//
//	manifest-<alg>.txt     "<digest>  data/<path>" for every payload file
//	bagit.txt              BagIt-Version 1.0, UTF-8
//	bag-info.txt           Bagging-Date, Payload-Oxum, Bag-Software-Agent
//	                       and the caller's fields
//	tagmanifest-<alg>.txt  the digests of the three files above
//
// Nothing is read: the tag manifest's digests are of the bytes Write
// writes. Each file is written as the copy's files are: under a temporary
// name, flushed, renamed over its name, the directory flushed; the
// payload manifest first and the tag manifest last, so that a crash
// between leaves a bag that fails validation (a tag file's digest), never
// one that validates with a stale manifest, and the next run rewrites it.

// WriteFormats are the manifest formats Write accepts.
var WriteFormats = []string{"sha256", "sha512"}

// WriteFile is one payload file for Write.
type WriteFile struct {
	Path   string // below data/, '/'-separated
	Size   int64
	Digest string // in the bag's format, lower-case hex
}

// WriteField is one bag-info.txt field.
type WriteField struct {
	Label, Value string
}

// WriteInput is everything Write needs; it is its whole contract.
type WriteInput struct {
	Root      *fileio.Dir // the bag's directory, which holds data/
	Algorithm string      // sha256 or sha512
	Files     []WriteFile // every payload file, each once
	// Info are bag-info.txt's fields besides those Write computes
	// (Bagging-Date, Payload-Oxum, Bag-Software-Agent, which replace any
	// of those labels here), in this order.
	Info  []WriteField
	Agent string    // Bag-Software-Agent, such as "fastcopy 1.2"
	Date  time.Time // Bagging-Date (its local date); zero means today
	// NoSync leaves out the flushes (--no-sync): the renames still
	// replace each file whole.
	NoSync bool
}

// Written says what Write wrote.
type Written struct {
	Manifest string // the payload manifest's name
	Oxum     string // Payload-Oxum: bytes.files
	Files    int
}

// computedLabels are the bag-info.txt labels Write sets itself.
var computedLabels = []string{"Bagging-Date", "Payload-Oxum", "Bag-Software-Agent"}

// Write writes the tag files of the bag at in.Root for its payload
// in.Files. It refuses a bag that already holds a payload manifest in
// another format (WriteOtherManifests says which): that manifest would
// keep listing what this one no longer does.
func Write(in *WriteInput) (Written, error) {
	f, ok := digest.Lookup(in.Algorithm)
	if !ok || !writeAllowed(f.Name) {
		return Written{}, fmt.Errorf("%q is not a BagIt manifest format fastcopy writes (%s)", in.Algorithm, strings.Join(WriteFormats, ", "))
	}
	if other, err := WriteOtherManifests(in.Root, f.Name); err != nil {
		return Written{}, err
	} else if len(other) > 0 {
		return Written{}, fmt.Errorf("the bag holds %s, and this run writes manifest-%s.txt", strings.Join(other, ", "), f.Name)
	}
	files := append([]WriteFile(nil), in.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var man bytes.Buffer
	var total int64
	for i, pf := range files {
		if i > 0 && files[i-1].Path == pf.Path {
			return Written{}, fmt.Errorf("%q is listed twice", pf.Path)
		}
		if pf.Digest == "" {
			return Written{}, fmt.Errorf("%q has no %s digest", pf.Path, f.Name)
		}
		man.WriteString(strings.ToLower(pf.Digest) + "  " + WriteEncodePath("data/"+pf.Path) + "\n")
		total += pf.Size
	}
	oxum := fmt.Sprintf("%d.%d", total, len(files))
	date := in.Date
	if date.IsZero() {
		date = time.Now()
	}
	info, err := writeInfo(in.Info, []WriteField{
		{"Bagging-Date", date.Format("2006-01-02")},
		{"Payload-Oxum", oxum},
		{"Bag-Software-Agent", in.Agent},
	})
	if err != nil {
		return Written{}, err
	}
	decl := []byte("BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
	manName := "manifest-" + f.Name + ".txt"
	tags := []struct {
		name string
		data []byte
	}{{manName, man.Bytes()}, {"bagit.txt", decl}, {"bag-info.txt", info}}
	var tagman bytes.Buffer
	for _, t := range tags {
		if err := writeAtomic(in.Root, t.name, t.data, in.NoSync); err != nil {
			return Written{}, fmt.Errorf("writing %s: %w", t.name, err)
		}
		h := f.New()
		h.Write(t.data)
		tagman.WriteString(f.Encode(h.Sum(nil)) + "  " + t.name + "\n")
	}
	tagName := "tagmanifest-" + f.Name + ".txt"
	if err := writeAtomic(in.Root, tagName, tagman.Bytes(), in.NoSync); err != nil {
		return Written{}, fmt.Errorf("writing %s: %w", tagName, err)
	}
	return Written{Manifest: manName, Oxum: oxum, Files: len(files)}, nil
}

func writeAllowed(name string) bool {
	for _, a := range WriteFormats {
		if a == name {
			return true
		}
	}
	return false
}

// WriteOtherManifests lists the payload and tag manifests of the bag at
// root in other formats than alg.
func WriteOtherManifests(root *fileio.Dir, alg string) ([]string, error) {
	ents, err := root.ReadDir()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name
		for _, p := range []string{"manifest-", "tagmanifest-"} {
			if strings.HasPrefix(n, p) && strings.HasSuffix(n, ".txt") && n != p+alg+".txt" {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// WriteForeignTags lists the files of root named as a bag's tag files
// (bag-info.txt, manifest-*.txt, tagmanifest-*.txt) when root is no bag
// (it has no bagit.txt): they are someone else's, and a bag written there
// would replace them or read their lines as its own. In a bag, or a root
// with none of those names, it lists nothing.
func WriteForeignTags(root *fileio.Dir) ([]string, error) {
	ents, err := root.ReadDir()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		switch n := e.Name; {
		case n == "bagit.txt":
			return nil, nil
		case n == "bag-info.txt",
			strings.HasSuffix(n, ".txt") && (strings.HasPrefix(n, "manifest-") || strings.HasPrefix(n, "tagmanifest-")):
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// writeInfo is bag-info.txt: the caller's fields, less those Write
// computes, then the computed ones. A label or value that would break the
// file's lines is refused.
func writeInfo(fields, computed []WriteField) ([]byte, error) {
	var b bytes.Buffer
	for _, fl := range append(writeWithout(fields, computedLabels), computed...) {
		if err := WriteCheckField(fl.Label, fl.Value); err != nil {
			return nil, err
		}
		if fl.Value == "" && fl.Label == "Bag-Software-Agent" {
			continue
		}
		b.WriteString(fl.Label + ": " + fl.Value + "\n")
	}
	return b.Bytes(), nil
}

func writeWithout(fields []WriteField, labels []string) []WriteField {
	var out []WriteField
	for _, fl := range fields {
		drop := false
		for _, l := range labels {
			if strings.EqualFold(fl.Label, l) {
				drop = true
			}
		}
		if !drop {
			out = append(out, fl)
		}
	}
	return out
}

// WriteCheckField refuses a bag-info.txt field that cannot be written as
// one line "Label: value": an empty label, one with a colon or white
// space at its ends, or a line break anywhere.
func WriteCheckField(label, value string) error {
	switch {
	case strings.TrimSpace(label) == "":
		return errors.New("a bag-info.txt field has an empty label")
	case strings.ContainsAny(label, ":\r\n"), strings.TrimSpace(label) != label:
		return fmt.Errorf("bag-info.txt label %q: no colon, line break or white space at its ends", label)
	case strings.ContainsAny(value, "\r\n"):
		return fmt.Errorf("bag-info.txt field %q: its value holds a line break", label)
	}
	return nil
}

// WriteEncodePath is a path as a BagIt manifest writes it: CR and LF
// percent-encoded (%0D, %0A), nothing else. RFC 8493 (2.1.3) has the
// percent sign encoded too (%25); bagit-python, the validator archives
// use, neither writes nor reads that, and takes "100%25.txt" for a file
// of that name: a bag whose names hold a percent sign validates there
// only as written here.
func WriteEncodePath(p string) string {
	return strings.NewReplacer("\r", "%0D", "\n", "%0A").Replace(p)
}

// WriteReadInfo reads the fields of the bag's bag-info.txt, continuation
// lines joined; none when it has none.
func WriteReadInfo(root *fileio.Dir) ([]WriteField, error) {
	data, err := writeReadSmall(root, "bag-info.txt")
	if err != nil || data == nil {
		return nil, err
	}
	var out []WriteField
	for _, line := range strings.Split(strings.TrimRight(string(data), "\r\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		if (line[0] == ' ' || line[0] == '\t') && len(out) > 0 {
			out[len(out)-1].Value += " " + strings.TrimSpace(line)
			continue
		}
		label, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("bag-info.txt: %q is not a field", line)
		}
		out = append(out, WriteField{strings.TrimSpace(label), strings.TrimSpace(value)})
	}
	return out, nil
}

// WriteReadManifest reads the bag's payload manifest in alg, if it has
// one: each payload path (below data/) with its digest.
func WriteReadManifest(root *fileio.Dir, alg string) (map[string]string, error) {
	data, err := writeReadSmall(root, "manifest-"+alg+".txt")
	if err != nil || data == nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		sum, p, ok := strings.Cut(line, " ")
		p = strings.TrimLeft(p, " \t")
		if !ok || p == "" {
			return nil, fmt.Errorf("manifest-%s.txt line %d: not a digest and a path", alg, i+1)
		}
		p = unescapePath(p, false)
		rel, ok := strings.CutPrefix(p, "data/")
		if !ok {
			return nil, fmt.Errorf("manifest-%s.txt line %d: %q is not under data/", alg, i+1, p)
		}
		out[rel] = strings.ToLower(sum)
	}
	return out, nil
}

// writeReadSmall reads a tag file of the bag (nil, nil when it has none).
func writeReadSmall(root *fileio.Dir, name string) ([]byte, error) {
	data, err := fileio.ReadRegular(root, name)
	if fileio.IsNotExist(err) {
		return nil, nil
	}
	return data, err
}

// writeAtomic publishes a tag file as the copy's records are published
// (fileio.WriteFileAtomic).
func writeAtomic(d *fileio.Dir, name string, data []byte, noSync bool) error {
	return fileio.WriteFileAtomic(d, name, data, !noSync)
}
