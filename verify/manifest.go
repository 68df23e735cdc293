package verify

import (
	"bufio"
	"fmt"
	"github.com/fastcopy/fastcopy/internal/digest"
	"io"
	"sort"
	"strings"
)

// ManifestEntry is one line of a manifest: a file's digest and its path
// relative to the manifest's root, with '/' separators.
type ManifestEntry struct {
	Sum  Sum
	Path string
}

// WriteManifest writes entries, sorted by path, in the format of
// `xxhsum -H2`: "<32 hex digits>  <path>\n". A path holding a newline,
// carriage return or backslash is written with GNU coreutils' escaping: the
// line starts with a backslash and those characters are written as \n, \r
// and \\ (as sha256sum does). xxhsum 0.8.1 cannot read such lines;
// ReadManifest can.
func WriteManifest(w io.Writer, entries []ManifestEntry) error {
	lines := make([]DigestLine, len(entries))
	for i, e := range entries {
		lines[i] = DigestLine{Digest: Hex(e.Sum), Path: e.Path}
	}
	return WriteDigests(w, lines)
}

// DigestLine is one line of a manifest in any format: a digest as text
// (lower-case hex) and a path relative to the manifest's root.
type DigestLine struct {
	Digest string
	Path   string
}

// WriteDigests writes lines, sorted by path, in the line format shared by
// xxhsum -H2 and the coreutils tools (sha256sum, sha512sum, md5sum, b3sum):
// "<digest>  <path>\n", a path holding a newline, carriage return or
// backslash escaped as WriteManifest says, so that `sha256sum -c` reads
// back every name.
func WriteDigests(w io.Writer, lines []DigestLine) error {
	sorted := append([]DigestLine(nil), lines...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	bw := bufio.NewWriter(w)
	for _, e := range sorted {
		name, escaped := escapeName(e.Path)
		if escaped {
			bw.WriteByte('\\')
		}
		bw.WriteString(e.Digest)
		bw.WriteString("  ")
		bw.WriteString(name)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func escapeName(name string) (string, bool) {
	if !strings.ContainsAny(name, "\\\n\r") {
		return name, false
	}
	r := strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r")
	return r.Replace(name), true
}

// ManifestError is a line of a manifest that could not be read.
type ManifestError struct {
	Line int
	Msg  string
}

func (e *ManifestError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ReadManifest reads a manifest written by WriteManifest or by
// `xxhsum -H2` (GNU format, with or without escaping; also the BSD format
// of `--tag`: "XXH128 (path) = hex"). Blank lines and lines starting with
// '#' are ignored.
func ReadManifest(r io.Reader) ([]ManifestEntry, error) {
	xxh128, _ := digest.Lookup("xxh128")
	listed, err := ReadDigests(r, "", xxh128)
	if err != nil {
		return nil, err
	}
	out := make([]ManifestEntry, 0, len(listed))
	for _, l := range listed {
		if l.Format != xxh128 {
			return nil, &ManifestError{Line: l.Line, Msg: "a " + l.Format.Name + " digest, where this manifest is xxh128"}
		}
		sum, err := ParseHex(l.Value)
		if err != nil {
			return nil, &ManifestError{Line: l.Line, Msg: err.Error()}
		}
		out = append(out, ManifestEntry{Sum: sum, Path: l.Path})
	}
	return out, nil
}

func unescapeName(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("escaped path ends with a backslash")
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf("unknown escape \\%c in path", s[i])
		}
	}
	return b.String(), nil
}
