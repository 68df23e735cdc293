package mhl

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/verify"
)

// Generations in several formats. Each file's digest in a format other
// than xxh128 is given by the caller (File.Extra), computed in the same
// read as its xxh128; the directory hashes of each format are computed
// from the files' digests of that format, as the specification defines
// them (dirhash.go), with that format's hash: raw bytes of the children's
// digests (a C4 ID's are the SHA-512 it stands for), sorted, concatenated.

// schemaOrder is the order the schema (ASCMHL.xsd) gives the hash
// elements of a file or directory: a generation that lists them in
// another fails its validation.
var schemaOrder = []string{"c4", "md5", "sha1", "xxh128", "xxh3", "xxh64"}

// formats is ng's formats in the schema's order, xxh128 when it names
// none. A format the schema does not list is kept, last, for
// hashTreeIn to refuse.
func (ng *NewGeneration) formats() []string {
	if len(ng.Formats) == 0 {
		return []string{formatXXH}
	}
	var out []string
	for _, f := range schemaOrder {
		if slices.Contains(ng.Formats, f) {
			out = append(out, f)
		}
	}
	for _, f := range ng.Formats {
		if !slices.Contains(schemaOrder, f) {
			out = append(out, f)
		}
	}
	return out
}

// dirPairs are a directory's content and structure hashes, one of each
// per format, as text.
type dirPairs struct {
	formats            []string
	content, structure []string
}

// fileDigest is f's digest in format, as text ("" when f has none).
func fileDigest(f *File, format string) string {
	if format == formatXXH {
		return verify.Hex(f.Sum)
	}
	return f.Extra[format]
}

// sameDigest compares two digests of format as text: hex in any case, C4
// IDs exactly.
func sameDigest(format, a, b string) bool {
	if format == "c4" {
		return a == b
	}
	return strings.EqualFold(a, b)
}

// rawDigest is the bytes a digest's text stands for.
func rawDigest(format, text string) ([]byte, error) {
	if format == "c4" {
		b, err := ParseC4(text)
		return b[:], err
	}
	return hex.DecodeString(text)
}

// textDigest is the text of a raw digest of format.
func textDigest(f *digest.Format, raw []byte) string { return f.Encode(raw) }

// hashTreeIn computes the directory hashes of the tree in every format,
// and checks that each file has a digest in each.
func hashTreeIn(tree *node, formats []string) (map[*node]*dirPairs, error) {
	out := map[*node]*dirPairs{}
	for _, name := range formats {
		f, ok := digest.Lookup(name)
		if !ok || !isSpecFormat(f.Name) {
			return nil, fmt.Errorf("%q is not a hash format of ASC MHL", name)
		}
		if err := setContents(tree, f.Name); err != nil {
			return nil, err
		}
		sum := func(p []byte) []byte {
			h := f.New()
			h.Write(p)
			return h.Sum(nil)
		}
		if f.Name == formatXXH {
			sum = xxh128Bytes
		}
		hashTree(tree, sum)
		collectDirs(tree, f, out)
	}
	return out, nil
}

// isSpecFormat says whether the specification lists the format.
func isSpecFormat(name string) bool {
	return slices.Contains(schemaOrder, name)
}

// setContents gives each file node below n its raw digest of format.
func setContents(n *node, format string) error {
	for _, c := range n.children {
		if c.dir {
			if err := setContents(c, format); err != nil {
				return err
			}
			continue
		}
		text := fileDigest(c.file, format)
		if text == "" {
			return fmt.Errorf("%q has no %s digest", c.path, format)
		}
		raw, err := rawDigest(format, text)
		if err != nil {
			return fmt.Errorf("%q: its %s digest %q: %w", c.path, format, text, err)
		}
		c.content = raw
	}
	return nil
}

// collectDirs appends the hashes hashTree left in each directory node of
// the tree to out.
func collectDirs(n *node, f *digest.Format, out map[*node]*dirPairs) {
	p := out[n]
	if p == nil {
		p = &dirPairs{}
		out[n] = p
	}
	p.formats = append(p.formats, f.Name)
	p.content = append(p.content, textDigest(f, n.content))
	p.structure = append(p.structure, textDigest(f, n.structure))
	for _, c := range n.children {
		if c.dir {
			collectDirs(c, f, out)
		}
	}
}
