package verify

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/internal/digest"
)

// ListedDigest is one line of a checksum manifest in any format fastcopy
// reads: the file's path relative to the manifest's root ('/'-separated),
// its digest as the line writes it, and the digest's format.
type ListedDigest struct {
	Line   int
	Path   string
	Format *digest.Format
	Value  string
	// Guessed is set when the format was taken from the digest's length
	// alone, and that length is another format's too (32 hex digits are
	// xxh128 or md5; 64, sha256 or blake3).
	Guessed bool
}

// ReadDigests reads a checksum manifest written by sha256sum, sha512sum,
// sha1sum, md5sum, b3sum, xxhsum -H0 to -H3 or fastcopy --manifest: in GNU
// form ("<hex>  <path>", "<hex> *<path>", a line that starts with a
// backslash holding \\, \n and \r escapes) or in the BSD form of --tag
// ("SHA256 (<path>) = <hex>", as xxhsum -H3 always writes). Blank lines
// and lines starting with '#' are ignored.
//
// The format of a tagged line is its tag. The format of a GNU line is, in
// this order: format when not nil; the one the manifest's file name
// (name, may be "") says, as in manifest-sha256.txt, SHA256SUMS,
// photos.md5 or B3SUMS, when its digests have that length; else the one
// its length says: 8 hex digits xxh32, 16 xxh64, 32 xxh128 (not md5), 40
// sha1, 64 sha256 (not blake3), 128 sha512. A digest of a length the
// format does not have, a tag fastcopy does not know and a line of
// neither form are errors naming the line.
func ReadDigests(r io.Reader, name string, format *digest.Format) ([]ListedDigest, error) {
	hint := FormatFromName(name)
	var out []ListedDigest
	br := bufio.NewReader(r)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		if line == "" && err == io.EOF {
			return out, nil
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line != "" && !strings.HasPrefix(line, "#") {
			e, perr := readDigestLine(line, format, hint)
			if perr != nil {
				return nil, &ManifestError{Line: lineNo, Msg: perr.Error()}
			}
			e.Line = lineNo
			out = append(out, e)
		}
		if err == io.EOF {
			return out, nil
		}
	}
}

// FormatFromName returns the format a manifest's file name names (its
// base name, case-insensitive): manifest-<format>.txt and
// tagmanifest-<format>.txt (BagIt), <FORMAT>SUMS and <format>sum.txt
// (SHA256SUMS, MD5SUMS, B3SUMS), and the extensions .sha256, .sha512,
// .sha1, .md5, .b3, .blake3, .xxh32, .xxh64, .xxh3 and .xxh128. It
// returns nil when the name says nothing.
func FormatFromName(name string) *digest.Format {
	base := strings.ToLower(filepath.Base(name))
	if name == "" || base == "." || base == "/" {
		return nil
	}
	stem := strings.TrimSuffix(base, ".txt")
	for _, p := range []string{"tagmanifest-", "manifest-"} {
		if strings.HasPrefix(stem, p) {
			return formatNamed(stem[len(p):])
		}
	}
	if strings.HasSuffix(stem, "sums") {
		return formatNamed(strings.TrimSuffix(stem, "sums"))
	}
	if strings.HasSuffix(stem, "sum") {
		return formatNamed(strings.TrimSuffix(stem, "sum"))
	}
	if ext := filepath.Ext(stem); ext != "" {
		return formatNamed(ext[1:])
	}
	return nil
}

// formatNamed is digest.Lookup that also takes b3 for blake3.
func formatNamed(n string) *digest.Format {
	if n == "b3" {
		n = "blake3"
	}
	if f, ok := digest.Lookup(n); ok && f.Name != "c4" {
		return f
	}
	return nil
}

// byHexLength is the format a GNU line's digest length gives, where the
// file name says nothing; ambiguous says another format has that length.
func byHexLength(n int) (f *digest.Format, ambiguous bool) {
	name := map[int]string{8: "xxh32", 16: "xxh64", 32: "xxh128", 40: "sha1", 64: "sha256", 128: "sha512"}[n]
	if name == "" {
		return nil, false
	}
	f, _ = digest.Lookup(name)
	return f, n == 32 || n == 64
}

func readDigestLine(line string, format, hint *digest.Format) (ListedDigest, error) {
	escaped := strings.HasPrefix(line, "\\")
	if escaped {
		line = line[1:]
	}
	if e, ok, err := readTaggedLine(line, escaped, format); ok || err != nil {
		return e, err
	}
	sp := strings.IndexByte(line, ' ')
	if sp < 0 || sp+1 >= len(line) || (line[sp+1] != ' ' && line[sp+1] != '*') {
		return ListedDigest{}, fmt.Errorf("expected a digest, two spaces (or a space and '*') and a path")
	}
	value := line[:sp]
	if !isHex(value) {
		return ListedDigest{}, fmt.Errorf("%q is not a hex digest", value)
	}
	name, err := manifestPath(line[sp+2:], escaped)
	if err != nil {
		return ListedDigest{}, err
	}
	e := ListedDigest{Path: name, Value: value}
	switch {
	case format != nil:
		e.Format = format
	case hint != nil && hint.Size*2 == len(value):
		e.Format = hint
	default:
		e.Format, e.Guessed = byHexLength(len(value))
		if e.Format == nil {
			return ListedDigest{}, fmt.Errorf("a digest of %d hex digits is of no format fastcopy knows by its length (give --manifest-hash)", len(value))
		}
	}
	if e.Format.Size*2 != len(value) {
		return ListedDigest{}, fmt.Errorf("a %s digest has %d hex digits, not %d", e.Format.Name, e.Format.Size*2, len(value))
	}
	return e, nil
}

// readTaggedLine reads "TAG (path) = hex"; ok is false when line is not
// of that form (a GNU line whose path happens to hold " (" is not: its
// first word is a hex digest).
func readTaggedLine(line string, escaped bool, format *digest.Format) (_ ListedDigest, ok bool, _ error) {
	open := strings.Index(line, " (")
	end := strings.LastIndex(line, ") = ")
	if open <= 0 || end < open || isHex(line[:open]) {
		return ListedDigest{}, false, nil
	}
	tag := line[:open]
	f := formatNamed(tag)
	if f == nil {
		return ListedDigest{}, true, fmt.Errorf("tag %q names a format fastcopy does not check (it checks %s)", tag, strings.Join(manifestFormats(), ", "))
	}
	if format != nil && format != f {
		return ListedDigest{}, true, fmt.Errorf("tag %q, not the %s that --manifest-hash names", tag, format.Name)
	}
	value := strings.TrimSpace(line[end+4:])
	if !isHex(value) || len(value) != f.Size*2 {
		return ListedDigest{}, true, fmt.Errorf("%q is not a %s digest", value, f.Name)
	}
	name, err := manifestPath(line[open+2:end], escaped)
	if err != nil {
		return ListedDigest{}, true, err
	}
	return ListedDigest{Path: name, Format: f, Value: value}, true, nil
}

// manifestFormats lists the formats a manifest may be in (all but c4).
func manifestFormats() []string {
	var out []string
	for _, n := range digest.Names() {
		if n != "c4" {
			out = append(out, n)
		}
	}
	return out
}

func manifestPath(name string, escaped bool) (string, error) {
	if escaped {
		var err error
		if name, err = unescapeName(name); err != nil {
			return "", err
		}
	}
	if name == "" {
		return "", fmt.Errorf("empty path")
	}
	return name, nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
