// Package bagit reads and validates BagIt bags (RFC 8493), the packaging
// format of libraries and archives: a payload under data/, one or more
// manifest-<alg>.txt listing a digest of every payload file, bagit.txt,
// an optional bag-info.txt (whose Payload-Oxum counts the payload's bytes
// and files) and optional tagmanifest-<alg>.txt listing digests of the tag
// files.
//
// Check validates a bag as bagit-python's --validate does: every manifest
// and tag manifest in a format fastcopy computes is checked, each file
// read once for all of them; every payload file must be in every payload
// manifest and nothing else may be under data/; Payload-Oxum must match.
// A bag with a fetch.txt (files still to be downloaded) is refused.
package bagit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// Difference kinds Check reports besides those of treeverify.
const (
	// CheckUnlisted: a payload file a payload manifest does not list.
	CheckUnlisted = "unlisted"
	// CheckOxum: bag-info.txt's Payload-Oxum does not match data/.
	CheckOxum = "oxum"
)

// CheckResult is what Check found.
type CheckResult struct {
	// Report holds every difference, sorted by path: a payload file
	// that differs from a manifest, is missing, is not in a manifest
	// (CheckUnlisted, or Extra when no manifest lists it), a tag file that
	// differs or is missing, and a wrong Payload-Oxum (CheckOxum, on
	// bag-info.txt).
	Report treeverify.Report
	// Version is bagit.txt's BagIt-Version.
	Version string
	// Manifests and TagManifests name the manifest files checked.
	Manifests, TagManifests []string
	// Unchecked names manifests in formats fastcopy does not compute
	// (manifest-sha3_256.txt): their lists count for completeness, their
	// digests are not checked.
	Unchecked []string
	// Oxum is bag-info.txt's Payload-Oxum ("" when it has none).
	Oxum string
}

// CheckIsBag reports whether dir holds a bagit.txt: a bag to Check.
func CheckIsBag(dir string) bool {
	d, err := fileio.OpenDir(fileio.RealPath(dir))
	if err != nil {
		return false
	}
	defer d.Close()
	st, err := d.Lstat("bagit.txt")
	return err == nil && st.IsRegular()
}

// checkManifest is one manifest-<alg>.txt or tagmanifest-<alg>.txt.
type checkManifest struct {
	name    string
	alg     string
	format  *digest.Format // nil when fastcopy does not compute alg
	entries map[string]string
	// literal holds, for a path whose percent-encoding was decoded, the
	// path as the line spells it: bagit-python (and fastcopy --bag, to be
	// read by it) writes a name's '%' as it is, so "x%25y" may name the
	// file x%25y, and "a%0Ab" the file a%0Ab.
	literal map[string]string
}

// checkLiterals takes, for each path m decoded from an escape that the
// payload lacks while it holds the path as spelled, the spelled one: the
// writers differ on '%', and a lookup under either spelling is a lookup,
// not a trust (the file's digest is still checked).
func (m *checkManifest) checkLiterals(files map[string]int64) {
	for dec, lit := range m.literal {
		if _, ok := files[dec]; ok {
			continue
		}
		if _, ok := files[lit]; !ok {
			continue
		}
		if _, taken := m.entries[lit]; taken {
			continue
		}
		m.entries[lit] = m.entries[dec]
		delete(m.entries, dec)
	}
}

// Check validates the bag dir. opt's Jobs and FromCache apply; its other
// fields are set by Check. An error is returned when dir is not a bag
// that can be checked (no bagit.txt, a malformed tag file, a fetch.txt,
// manifests only in formats fastcopy does not compute), when it cannot
// be read, or when ctx is done; every difference of content is in the
// result's Report.
func Check(ctx context.Context, dir string, opt treeverify.TreeOptions) (*CheckResult, error) {
	d, err := fileio.OpenDir(fileio.RealPath(dir))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	res := &CheckResult{}
	if res.Version, err = checkDeclaration(d); err != nil {
		return nil, err
	}
	if _, err := d.Lstat("fetch.txt"); err == nil {
		return nil, &CheckError{Path: "fetch.txt", Err: ErrCheckFetch}
	}
	payload, tags, err := checkReadManifests(d)
	if err != nil {
		return nil, err
	}
	files, err := checkPayload(d)
	if err != nil {
		return nil, err
	}
	for _, m := range append(append([]*checkManifest(nil), payload...), tags...) {
		m.checkLiterals(files)
	}
	want, order, err := res.checkWanted(payload, tags)
	if err != nil {
		return nil, err
	}
	var diffs []treeverify.Diff
	diffs = append(diffs, checkCompleteness(payload, files)...)
	diffs = append(diffs, checkUnhashedMissing(payload, files, want)...)
	oxum, oxumDiff, err := checkOxum(d, files)
	if err != nil {
		return nil, err
	}
	res.Oxum = oxum
	if oxumDiff != nil {
		diffs = append(diffs, *oxumDiff)
	}
	sort.Strings(order)
	entries := make([]treeverify.DigestEntry, 0, len(order))
	for _, p := range order {
		entries = append(entries, treeverify.DigestEntry{Path: p, Digests: want[p]})
	}
	opt.Known, opt.Unhashed, opt.Exclude, opt.DestName = nil, nil, nil, nil
	opt.Unlisted = func(string) bool { return false } // completeness is checked above
	rep, err := treeverify.CheckDigests(ctx, entries, dir, opt)
	if err != nil {
		return nil, err
	}
	checkMerge(&rep, diffs, want)
	res.Report = rep
	return res, nil
}

// checkWanted gathers, from the manifests fastcopy computes, the digests
// each path must have (order lists the paths, each once), and names in
// res the manifests checked and those in formats it does not compute. A
// bag whose payload manifests are all in such formats is an error.
func (res *CheckResult) checkWanted(payload, tags []*checkManifest) (want map[string][]treeverify.Digest, order []string, err error) {
	want = map[string][]treeverify.Digest{}
	add := func(m *checkManifest) {
		for p, v := range m.entries {
			if m.format == nil {
				continue
			}
			if _, ok := want[p]; !ok {
				order = append(order, p)
			}
			want[p] = append(want[p], treeverify.Digest{Format: m.format, Value: v, From: m.name})
		}
	}
	known := 0
	for _, m := range payload {
		if m.format == nil {
			res.Unchecked = append(res.Unchecked, m.name)
		} else {
			known++
			res.Manifests = append(res.Manifests, m.name)
		}
		add(m)
	}
	if known == 0 {
		var algs []string
		for _, m := range payload {
			algs = append(algs, m.alg)
		}
		return nil, nil, &CheckError{Path: payload[0].name, Err: fmt.Errorf("%w: %s (fastcopy checks %s)", ErrCheckFormat, strings.Join(algs, ", "), strings.Join(CheckFormats(), ", "))}
	}
	for _, m := range tags {
		if m.format == nil {
			res.Unchecked = append(res.Unchecked, m.name)
		} else {
			res.TagManifests = append(res.TagManifests, m.name)
		}
		add(m)
	}
	return want, order, nil
}

// checkMerge completes rep, the digests' check: a missing file is told
// the manifests that list it, and the differences found before reading
// (diffs: completeness, Payload-Oxum) join it, all sorted by path.
func checkMerge(rep *treeverify.Report, diffs []treeverify.Diff, want map[string][]treeverify.Digest) {
	for i, df := range rep.Diffs {
		if df.Kind == treeverify.Missing && df.Detail == "" {
			var from []string
			for _, w := range want[df.Path] {
				from = append(from, w.From)
			}
			rep.Diffs[i].Detail = "listed in " + strings.Join(from, ", ")
		}
	}
	rep.Diffs = append(rep.Diffs, diffs...)
	for _, df := range diffs {
		if df.Kind == treeverify.Extra {
			rep.Extra++
		}
	}
	sort.SliceStable(rep.Diffs, func(i, j int) bool { return rep.Diffs[i].Path < rep.Diffs[j].Path })
}

// CheckFormats lists the BagIt manifest algorithms Check computes,
// weakest first.
func CheckFormats() []string {
	var out []string
	for _, n := range digest.Names() {
		if _, ok := checkFormat(n); ok {
			out = append(out, n)
		}
	}
	return out
}

// checkFormat maps a BagIt algorithm name (RFC 8493 section 2.4:
// lower-case, as in manifest-sha256.txt) to the format fastcopy computes.
func checkFormat(alg string) (*digest.Format, bool) {
	switch alg {
	case "md5", "sha1", "sha256", "sha512", "blake3":
		return digest.Lookup(alg)
	}
	return nil, false
}

// checkDeclaration reads bagit.txt: its BagIt-Version, and a
// Tag-File-Character-Encoding of UTF-8.
func checkDeclaration(d *fileio.Dir) (string, error) {
	data, err := checkReadFile(d, "bagit.txt")
	if fileio.IsNotExist(err) {
		return "", &CheckError{Path: "bagit.txt", Err: ErrCheckNotBag}
	}
	if err != nil {
		return "", err
	}
	fields, err := checkTagFields(data)
	if err != nil {
		return "", &CheckError{Path: "bagit.txt", Err: err}
	}
	version := checkField(fields, "BagIt-Version")
	if version == "" {
		return "", &CheckError{Path: "bagit.txt", Err: fmt.Errorf("no BagIt-Version")}
	}
	maj, _, ok := strings.Cut(version, ".")
	if n, err := strconv.Atoi(maj); !ok || err != nil || n > 1 {
		return "", &CheckError{Path: "bagit.txt", Err: fmt.Errorf("BagIt-Version %q: fastcopy checks versions 0.97 to 1.0", version)}
	}
	if enc := checkField(fields, "Tag-File-Character-Encoding"); !strings.EqualFold(enc, "UTF-8") {
		return "", &CheckError{Path: "bagit.txt", Err: fmt.Errorf("Tag-File-Character-Encoding %q: fastcopy reads UTF-8 tag files only", enc)}
	}
	return version, nil
}

// checkReadManifests reads every manifest-<alg>.txt and
// tagmanifest-<alg>.txt of the bag, sorted by name. A bag without a
// payload manifest is an error.
func checkReadManifests(d *fileio.Dir) (payload, tags []*checkManifest, err error) {
	names, err := d.ReadDir()
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name < names[j].Name })
	for _, n := range names {
		var prefix string
		switch {
		case strings.HasPrefix(n.Name, "manifest-"):
			prefix = "manifest-"
		case strings.HasPrefix(n.Name, "tagmanifest-"):
			prefix = "tagmanifest-"
		default:
			continue
		}
		if !strings.HasSuffix(n.Name, ".txt") {
			continue
		}
		alg := strings.TrimSuffix(strings.TrimPrefix(n.Name, prefix), ".txt")
		data, err := checkReadFile(d, n.Name)
		if err != nil {
			return nil, nil, err
		}
		m := &checkManifest{name: n.Name, alg: alg}
		m.format, _ = checkFormat(alg)
		if m.entries, err = checkParseManifest(data, m, prefix == "manifest-"); err != nil {
			return nil, nil, &CheckError{Path: n.Name, Err: err}
		}
		if prefix == "manifest-" {
			payload = append(payload, m)
		} else {
			tags = append(tags, m)
		}
	}
	if len(payload) == 0 {
		return nil, nil, &CheckError{Path: "manifest-sha256.txt", Err: ErrCheckNoManifest}
	}
	return payload, tags, nil
}

// checkParseManifest reads the lines of a manifest: "<digest> <path>",
// separated by one or more spaces or tabs, the path with CR, LF and '%'
// percent-encoded (RFC 8493 section 2.1.3). Payload manifests list files
// below data/ only.
func checkParseManifest(data []byte, m *checkManifest, payload bool) (map[string]string, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	out := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimLeft(line, " \t")
		sp := strings.IndexAny(line, " \t")
		if sp <= 0 {
			return nil, fmt.Errorf("line %d: expected a digest and a path", i+1)
		}
		value, rest := line[:sp], strings.TrimLeft(line[sp:], " \t")
		if rest == "" {
			return nil, fmt.Errorf("line %d: expected a digest and a path", i+1)
		}
		rest = strings.TrimPrefix(rest, "*")
		p, err := checkDecodePath(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+1, err)
		}
		if lit := strings.TrimPrefix(rest, "./"); lit != p {
			if _, err := cleanInBag(lit); err == nil {
				if m.literal == nil {
					m.literal = map[string]string{}
				}
				m.literal[p] = lit
			}
		}
		if payload && !strings.HasPrefix(p, "data/") {
			return nil, fmt.Errorf("line %d: %q is not below data/ (a payload manifest lists payload files only)", i+1, p)
		}
		if m.format != nil && len(value) != m.format.Size*2 {
			return nil, fmt.Errorf("line %d: %q is not a %s digest", i+1, value, m.format.Name)
		}
		if old, dup := out[p]; dup && !strings.EqualFold(old, value) {
			return nil, fmt.Errorf("line %d: %q is listed twice, with two digests", i+1, p)
		}
		out[p] = value
	}
	return out, nil
}

// checkDecodePath undoes the percent-encoding of a manifest path and
// refuses one that would leave the bag.
func checkDecodePath(s string) (string, error) { return cleanInBag(unescapePath(s, true)) }

// checkPayload lists the regular files below data/ with their sizes, by
// '/'-separated path relative to the bag ("data/..."). Symlinks and other
// entries that are not files or directories count as payload files too,
// of size 0, so that one no manifest lists is reported.
func checkPayload(d *fileio.Dir) (map[string]int64, error) {
	st, err := d.Lstat("data")
	if fileio.IsNotExist(err) {
		return nil, &CheckError{Path: "data", Err: fmt.Errorf("no data directory (the payload)")}
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &CheckError{Path: "data", Err: fmt.Errorf("is not a directory")}
	}
	sub, err := d.OpenSub("data")
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	out := map[string]int64{}
	return out, checkWalk(sub, "data", out)
}

func checkWalk(d *fileio.Dir, rel string, out map[string]int64) error {
	names, err := d.ReadDir()
	if err != nil {
		return err
	}
	for _, n := range names {
		p := rel + "/" + n.Name
		st, err := d.Lstat(n.Name)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			if st.IsRegular() {
				out[p] = st.Size
			} else {
				out[p] = 0
			}
			continue
		}
		sub, err := d.OpenSub(n.Name)
		if err != nil {
			return err
		}
		err = checkWalk(sub, p, out)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// checkCompleteness reports every payload file a payload manifest does not
// list: Extra when no manifest lists it (a file added to the bag),
// CheckUnlisted when only some do. A listed file that is missing is
// reported by the digest check.
func checkCompleteness(payload []*checkManifest, files map[string]int64) []treeverify.Diff {
	var out []treeverify.Diff
	for p := range files {
		var lacking []string
		for _, m := range payload {
			if _, ok := m.entries[p]; !ok {
				lacking = append(lacking, m.name)
			}
		}
		switch {
		case len(lacking) == 0:
		case len(lacking) == len(payload):
			out = append(out, treeverify.Diff{Path: p, Kind: treeverify.Extra, Detail: "payload file in no manifest (" + strings.Join(lacking, ", ") + ")"})
		default:
			out = append(out, treeverify.Diff{Path: p, Kind: CheckUnlisted, Detail: "payload file not in " + strings.Join(lacking, ", ")})
		}
	}
	return out
}

// checkUnhashedMissing reports the files that only manifests in formats
// fastcopy does not compute list and that are not there (the digest check
// reports those the others list).
func checkUnhashedMissing(payload []*checkManifest, files map[string]int64, want map[string][]treeverify.Digest) []treeverify.Diff {
	from := map[string][]string{}
	for _, m := range payload {
		if m.format != nil {
			continue
		}
		for p := range m.entries {
			if _, ok := files[p]; !ok && want[p] == nil {
				from[p] = append(from[p], m.name)
			}
		}
	}
	var out []treeverify.Diff
	for p, names := range from {
		out = append(out, treeverify.Diff{Path: p, Kind: treeverify.Missing, Detail: "listed in " + strings.Join(names, ", ")})
	}
	return out
}

// checkOxum compares bag-info.txt's Payload-Oxum ("<octets>.<files>") with
// the payload. A bag without bag-info.txt or without the field passes.
func checkOxum(d *fileio.Dir, files map[string]int64) (string, *treeverify.Diff, error) {
	data, err := checkReadFile(d, "bag-info.txt")
	if fileio.IsNotExist(err) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	fields, err := checkTagFields(data)
	if err != nil {
		return "", nil, &CheckError{Path: "bag-info.txt", Err: err}
	}
	oxum := checkField(fields, "Payload-Oxum")
	if oxum == "" {
		return "", nil, nil
	}
	var bytes int64
	for _, n := range files {
		bytes += n
	}
	octets, count, ok := strings.Cut(oxum, ".")
	wantBytes, err1 := strconv.ParseInt(octets, 10, 64)
	wantFiles, err2 := strconv.ParseInt(count, 10, 64)
	if !ok || err1 != nil || err2 != nil || wantBytes < 0 || wantFiles < 0 {
		return oxum, &treeverify.Diff{Path: "bag-info.txt", Kind: CheckOxum, Detail: fmt.Sprintf("Payload-Oxum %q is not <octets>.<files>", oxum)}, nil
	}
	if wantBytes != bytes || wantFiles != int64(len(files)) {
		return oxum, &treeverify.Diff{Path: "bag-info.txt", Kind: CheckOxum, Detail: fmt.Sprintf("Payload-Oxum %s records %d bytes in %d files; data/ holds %d bytes in %d files", oxum, wantBytes, wantFiles, bytes, len(files))}, nil
	}
	return oxum, nil, nil
}

// checkTagField is one "Label: value" of a tag file.
type checkTagField struct{ label, value string }

// checkTagFields reads the "Label: value" lines of bagit.txt or
// bag-info.txt; a line that starts with a space or tab continues the
// value before it.
func checkTagFields(data []byte) ([]checkTagField, error) {
	var out []checkTagField
	text := strings.TrimPrefix(string(data), "\ufeff")
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if len(out) == 0 {
				return nil, fmt.Errorf("line %d continues no field", i+1)
			}
			out[len(out)-1].value += " " + strings.TrimSpace(line)
			continue
		}
		label, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(label) == "" {
			return nil, fmt.Errorf("line %d: expected \"Label: value\"", i+1)
		}
		out = append(out, checkTagField{label: strings.TrimSpace(label), value: strings.TrimSpace(value)})
	}
	return out, nil
}

// checkField returns the first value of label (case-insensitive).
func checkField(fields []checkTagField, label string) string {
	for _, f := range fields {
		if strings.EqualFold(f.label, label) {
			return f.value
		}
	}
	return ""
}

// checkReadFile reads the regular file name in d, not following a symlink.
func checkReadFile(d *fileio.Dir, name string) ([]byte, error) {
	data, err := fileio.ReadRegular(d, name)
	if errors.Is(err, fileio.ErrNotRegular) {
		return nil, &CheckError{Path: name, Err: fmt.Errorf("is not a regular file")}
	}
	return data, err
}
