package treeverify

import (
	"context"
	"fmt"
	"strings"

	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Digest is one digest a record holds for a file: its format, its text
// (as the record writes it) and, for messages, the record it comes from
// ("manifest-sha256.txt"; may be empty).
type Digest struct {
	Format *digest.Format
	Value  string
	From   string
}

// DigestEntry is a file a record lists and the digests to check it
// against: every one of them is checked, all computed in one read.
type DigestEntry struct {
	Path    string // '/'-separated, relative to the checked directory
	Digests []Digest
}

// CheckDigests is CheckManifest for records in any format of
// internal/digest: each listed file must exist and match every digest
// its entry gives. Each file is read once, whatever the number of
// formats: they are computed side by side over the same bytes. An entry
// whose only digest is an xxh128 is checked as CheckManifest checks it
// (opt.Known may vouch for it without a read); no other format is taken
// from opt.Known, which knows only xxh128.
func CheckDigests(ctx context.Context, entries []DigestEntry, dir string, opt TreeOptions) (Report, error) {
	jobs := make([]hashJob, 0, len(entries))
	for _, e := range entries {
		if len(e.Digests) == 0 {
			return Report{}, fmt.Errorf("%q is listed without a digest", e.Path)
		}
		j := hashJob{rel: strings.TrimPrefix(e.Path, "./")}
		if len(e.Digests) == 1 && e.Digests[0].Format.Name == "xxh128" {
			s, err := verify.ParseHex(strings.TrimSpace(e.Digests[0].Value))
			if err != nil {
				return Report{}, fmt.Errorf("%q: %w", e.Path, err)
			}
			j.want = &s
		} else {
			j.digests = e.Digests
		}
		jobs = append(jobs, j)
	}
	return checkListed(ctx, jobs, dir, opt)
}

// compareDigests reads the file of j once, computes every format its
// digests name, and reports each that does not match.
func compareDigests(dst *fileio.Dir, j hashJob, opt TreeOptions, buf []byte) sizedDiff {
	var formats []*digest.Format
	seen := map[string]bool{}
	for _, d := range j.digests {
		if !seen[d.Format.Name] {
			seen[d.Format.Name] = true
			formats = append(formats, d.Format)
		}
	}
	set := digest.NewSet(formats)
	n, err := readInto(dst, j.rel, !opt.FromCache, buf, set)
	if err != nil {
		return sizedDiff{Diff: Diff{Path: j.rel, Kind: Failed, Detail: err.Error()}}
	}
	got := set.Sums()
	var bad []string
	for _, d := range j.digests {
		if g := got[d.Format.Name]; !d.Format.Equal(d.Value, g) {
			from := ""
			if d.From != "" {
				from = " by " + d.From
			}
			bad = append(bad, fmt.Sprintf("%s %s expected%s, %s found", d.Format.Name, strings.TrimSpace(d.Value), from, g))
		}
	}
	if len(bad) > 0 {
		return sizedDiff{Diff: Diff{Path: j.rel, Kind: Differ, Detail: strings.Join(bad, "; ")}, size: n}
	}
	return sizedDiff{size: n}
}

// readInto feeds the whole logical content of the regular file rel below
// root to w (holes read as zeros), without following symlinks, and
// returns the bytes read.
func readInto(root *fileio.Dir, rel string, dropCache bool, buf []byte, w *digest.Set) (int64, error) {
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	d, err := root.OpenBeneath(dir)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	f, err := d.Open(name, false)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.IsRegular() {
		return 0, fmt.Errorf("%q is not a regular file", rel)
	}
	if dropCache {
		_ = f.DropCache()
	}
	if st.Size > int64(len(buf)) {
		f.AdviseSequential()
	}
	var off int64
	for {
		n, err := f.ReadFull(buf, off)
		if err != nil {
			return off, err
		}
		_, _ = w.Write(buf[:n])
		off += int64(n)
		if n < len(buf) {
			return off, nil
		}
	}
}
