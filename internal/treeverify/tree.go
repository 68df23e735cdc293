package treeverify

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/pathjson"
	"github.com/fastcopy/fastcopy/verify"
)

// Difference kinds reported by CompareTrees and CheckManifest.
const (
	Missing  = "missing" // in the source (or manifest), not in the destination
	Extra    = "extra"   // in the destination only
	Differ   = "differs" // content differs
	TypeDiff = "type"    // one side is a file, the other something else
	Failed   = "unreadable"
	// Unchecked: listed (in TreeOptions.Unhashed) without a digest
	// fastcopy can check; present, but not vouched for.
	Unchecked = "unchecked"
)

// Diff is one difference between two trees, or between a manifest and a
// tree.
type Diff struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
}

// MarshalJSON writes d with its fields, and "path_base64" (the name's exact
// bytes) when Path is not valid UTF-8: JSON strings hold only Unicode, so
// "path" then shows U+FFFD where the name has bytes that are not, and only
// path_base64 names the file.
func (d Diff) MarshalJSON() ([]byte, error) {
	type plain Diff
	v := struct {
		plain
		PathBase64 []byte `json:"path_base64,omitempty"`
	}{plain: plain(d), PathBase64: pathjson.Bytes(d.Path)}
	return json.Marshal(v)
}

// Report is the outcome of a comparison.
type Report struct {
	Files int64  `json:"files"`      // regular files hashed on the checked side
	Bytes int64  `json:"bytes"`      // bytes hashed on the checked side
	Extra int64  `json:"extra"`      // files present only on the checked side
	Known int64  `json:"from_cache"` // digests taken from the hash cache, not read
	Diffs []Diff `json:"differences"`
}

// OK reports whether nothing differs. Extra files fail a tree comparison
// but not a manifest check (a manifest vouches for the files it lists).
func (r *Report) OK() bool { return len(r.Diffs) == 0 }

// TreeOptions tune a comparison.
type TreeOptions struct {
	Jobs int // files hashed at once; 0 means 4
	// FromCache reads the checked side through the page cache instead of
	// dropping its cached pages first (a scrub reads from the device).
	FromCache bool
	// Known, when set, may supply the digest of a file (by absolute path
	// and its current stat) without reading it: a hash cache's valid entry.
	Known func(path string, st *fileio.Stat) (verify.Sum, bool)
	// DestName, when set, maps a source name (one path element) to the
	// name its copy has in the destination (a copy made with names
	// encoded); CompareTrees then compares each source entry with the
	// entry of the mapped path. Nil keeps names as they are.
	DestName func(name string) string
	// Exclude, when set, leaves paths out of a tree comparison, on both
	// sides: a path (relative to the tree's root, '/'-separated) for which
	// it reports true is not compared, and nor is anything below it when
	// it is a directory. CheckManifest ignores it.
	Exclude func(rel string, isDir bool) bool
	// Unlisted, when set, makes CheckManifest report a regular file below
	// dir that the manifest does not list as a difference of kind Extra
	// when Unlisted(path) is true (path '/'-separated, relative to dir),
	// and leave it out altogether, not even counted, when false (a file
	// the manifest says is not its business). Nil counts such files in
	// Report.Extra without failing the check.
	Unlisted func(rel string) bool
	// Unhashed lists, for CheckManifest, files the manifest lists without
	// a digest fastcopy can check (by path, with the reason): one that is
	// absent is Missing, one that is present is Unchecked. They count as
	// listed; none is read.
	Unhashed map[string]string
}

type treeEntry struct {
	typ    uint32
	size   int64
	target string // symlinks
	sparse bool
}

// walkTree lists every entry below root (not following symlinks) that
// exclude (if not nil) does not leave out, keyed by its '/'-separated path
// relative to root.
func walkTree(root string, exclude func(string, bool) bool) (map[string]treeEntry, error) {
	d, err := fileio.OpenDir(fileio.RealPath(root))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out := map[string]treeEntry{}
	return out, walkDir(d, "", out, exclude)
}

func walkDir(d *fileio.Dir, rel string, out map[string]treeEntry, exclude func(string, bool) bool) error {
	names, err := d.ReadDir()
	if err != nil {
		return err
	}
	for _, n := range names {
		p := n.Name
		if rel != "" {
			p = rel + "/" + n.Name
		}
		st, err := d.Lstat(n.Name)
		if err != nil {
			return err
		}
		if exclude != nil && exclude(p, st.IsDir()) {
			continue
		}
		e := treeEntry{typ: st.Type(), size: st.Size, sparse: st.Sparse()}
		switch {
		case st.IsDir():
			sub, err := d.OpenSub(n.Name)
			if err != nil {
				return err
			}
			err = walkDir(sub, p, out, exclude)
			sub.Close()
			if err != nil {
				return err
			}
		case st.IsSymlink():
			if e.target, err = d.Readlink(n.Name); err != nil {
				return err
			}
		}
		out[p] = e
	}
	return nil
}

// hashAt hashes the regular file rel below root, without following symlinks.
// With known set and vouching for the file as it is, nothing is read and
// cached reports true.
func hashAt(root *fileio.Dir, rel string, dropCache bool, buf []byte, known func(string, *fileio.Stat) (verify.Sum, bool)) (_ verify.Sum, _ int64, cached bool, _ error) {
	sum, n, err := hashAtRead(root, rel, dropCache, buf, known)
	if err == errKnown {
		return sum, n, true, nil
	}
	return sum, n, false, err
}

var errKnown = fmt.Errorf("known")

func hashAtRead(root *fileio.Dir, rel string, dropCache bool, buf []byte, known func(string, *fileio.Stat) (verify.Sum, bool)) (verify.Sum, int64, error) {
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	d, err := root.OpenBeneath(dir)
	if err != nil {
		return verify.Sum{}, 0, err
	}
	defer d.Close()
	f, err := d.Open(name, false)
	if err != nil {
		return verify.Sum{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return verify.Sum{}, 0, err
	}
	if !st.IsRegular() {
		return verify.Sum{}, 0, fmt.Errorf("%q is not a regular file", rel)
	}
	if known != nil {
		if s, ok := known(filepath.Join(root.Path(), filepath.FromSlash(rel)), &st); ok {
			return s, st.Size, errKnown
		}
	}
	if dropCache {
		_ = f.DropCache()
	}
	return verify.HashFile(f, st.Size, st.Sparse(), buf)
}

// hashJob is one file to hash on one or both sides.
type hashJob struct {
	rel    string
	dstRel string      // the destination's spelling of rel, when it differs ("" when not)
	want   *verify.Sum // from a manifest; nil when the source is hashed too
	// digests, when set, are what the file is checked against instead
	// of want (records in formats other than xxh128: CheckDigests).
	digests []Digest
}

// CompareTrees compares the trees src and dst by content: every regular file
// of src must be in dst with the same xxh128, every symlink with the same
// target, every directory present; dst must hold nothing more.
func CompareTrees(ctx context.Context, src, dst string, opt TreeOptions) (Report, error) {
	se, err := walkTree(src, opt.Exclude)
	if err != nil {
		return Report{}, err
	}
	de, err := walkTree(dst, opt.Exclude)
	if err != nil {
		return Report{}, err
	}
	sd, err := fileio.OpenDir(fileio.RealPath(src))
	if err != nil {
		return Report{}, err
	}
	defer sd.Close()
	dd, err := fileio.OpenDir(fileio.RealPath(dst))
	if err != nil {
		return Report{}, err
	}
	defer dd.Close()
	pr := pairTrees(dd, se, de, opt.DestName)
	var r Report
	var jobs []hashJob
	found := make(map[string]bool, len(se))
	for p, s := range se {
		if pr.skip[p] {
			continue
		}
		if by, lost := pr.lost[p]; lost {
			r.Diffs = append(r.Diffs, lostDiff(p, by))
			continue
		}
		dp := pr.where(p)
		d, ok := de[dp]
		found[dp] = ok
		switch {
		case !ok:
			r.Diffs = append(r.Diffs, Diff{Path: p, Kind: Missing})
		case d.typ != s.typ:
			r.Diffs = append(r.Diffs, Diff{Path: p, Kind: TypeDiff, Detail: fmt.Sprintf("%s in source, %s in destination", fileio.Describe(s.typ), fileio.Describe(d.typ))})
		case s.typ == fileio.ModeSymlink && s.target != d.target:
			r.Diffs = append(r.Diffs, Diff{Path: p, Kind: Differ, Detail: fmt.Sprintf("symlink to %q in source, to %q in destination", s.target, d.target)})
		case s.typ == fileio.ModeRegular:
			jobs = append(jobs, hashJob{rel: p, dstRel: dp})
		}
	}
	for p := range de {
		if !found[p] {
			r.Extra++
			r.Diffs = append(r.Diffs, Diff{Path: p, Kind: Extra})
		}
	}
	err = hashAll(ctx, sd, dd, jobs, opt, &r)
	sortDiffs(&r)
	return r, err
}

// listedFile says what is wrong with the manifest path p in the tree de:
// missing, or not a regular file. bad is false when p is a regular file.
func listedFile(de map[string]treeEntry, p string) (diff Diff, bad bool) {
	d, ok := de[p]
	switch {
	case !ok:
		return Diff{Path: p, Kind: Missing}, true
	case d.typ != fileio.ModeRegular:
		return Diff{Path: p, Kind: TypeDiff, Detail: fileio.Describe(d.typ) + " where the manifest lists a file"}, true
	}
	return Diff{}, false
}

// CheckManifest checks the files below dir against a manifest: each listed
// file must exist and have the listed digest. Files below dir that the
// manifest does not list are counted in Extra but do not fail the check,
// unless opt.Unlisted says they do.
func CheckManifest(ctx context.Context, entries []verify.ManifestEntry, dir string, opt TreeOptions) (Report, error) {
	jobs := make([]hashJob, len(entries))
	for i := range entries {
		jobs[i] = hashJob{rel: strings.TrimPrefix(entries[i].Path, "./"), want: &entries[i].Sum}
	}
	return checkListed(ctx, jobs, dir, opt)
}

// checkListed checks the files below dir that a record lists (listed, each
// with what it must match) as CheckManifest describes.
func checkListed(ctx context.Context, listedJobs []hashJob, dir string, opt TreeOptions) (Report, error) {
	de, err := walkTree(dir, nil)
	if err != nil {
		return Report{}, err
	}
	var r Report
	listed := map[string]bool{}
	var jobs []hashJob
	for _, j := range listedJobs {
		p := j.rel
		listed[p] = true
		if diff, bad := listedFile(de, p); bad {
			r.Diffs = append(r.Diffs, diff)
		} else {
			jobs = append(jobs, j)
		}
	}
	for p, why := range opt.Unhashed {
		p = strings.TrimPrefix(p, "./")
		listed[p] = true
		if diff, bad := listedFile(de, p); bad {
			r.Diffs = append(r.Diffs, diff)
		} else {
			r.Diffs = append(r.Diffs, Diff{Path: p, Kind: Unchecked, Detail: why})
		}
	}
	for p, d := range de {
		if d.typ != fileio.ModeRegular || listed[p] {
			continue
		}
		switch {
		case opt.Unlisted == nil:
			r.Extra++
		case opt.Unlisted(p):
			r.Extra++
			r.Diffs = append(r.Diffs, Diff{Path: p, Kind: Extra, Detail: "not listed"})
		}
	}
	dd, err := fileio.OpenDir(fileio.RealPath(dir))
	if err != nil {
		return Report{}, err
	}
	defer dd.Close()
	err = hashAll(ctx, nil, dd, jobs, opt, &r)
	sortDiffs(&r)
	return r, err
}

// hashAll hashes the jobs with opt.Jobs workers: the destination side always,
// the source side when src is not nil, and records differences in r.
func hashAll(ctx context.Context, src, dst *fileio.Dir, jobs []hashJob, opt TreeOptions, r *Report) error {
	n := opt.Jobs
	if n <= 0 {
		n = 4
	}
	ch := make(chan hashJob)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, verify.BufSize)
			for j := range ch {
				d := compareOne(src, dst, j, opt, buf)
				mu.Lock()
				if d.Kind != "" {
					r.Diffs = append(r.Diffs, d.Diff)
				}
				if d.Kind != Failed {
					r.Files++
					r.Bytes += d.size
					r.Known += d.known
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			close(ch)
			wg.Wait()
			return ctx.Err()
		}
	}
	close(ch)
	wg.Wait()
	return ctx.Err()
}

type sizedDiff struct {
	Diff
	size  int64
	known int64 // digests that came from Known
}

func compareOne(src, dst *fileio.Dir, j hashJob, opt TreeOptions, buf []byte) sizedDiff {
	if j.digests != nil {
		return compareDigests(dst, j, opt, buf)
	}
	var want verify.Sum
	var known int64
	if j.want != nil {
		want = *j.want
	} else {
		s, _, cached, err := hashAt(src, j.rel, false, buf, opt.Known)
		if err != nil {
			return sizedDiff{Diff: Diff{Path: j.rel, Kind: Failed, Detail: "source: " + err.Error()}}
		}
		if cached {
			known++
		}
		want = s
	}
	drel := j.rel
	if j.dstRel != "" {
		drel = j.dstRel
	}
	got, n, cached, err := hashAt(dst, drel, !opt.FromCache, buf, opt.Known)
	if err != nil {
		return sizedDiff{Diff: Diff{Path: j.rel, Kind: Failed, Detail: err.Error()}}
	}
	if cached {
		known++
	}
	if got != want {
		return sizedDiff{Diff: Diff{Path: j.rel, Kind: Differ, Detail: fmt.Sprintf("xxh128 %s expected, %s found", verify.Hex(want), verify.Hex(got))}, size: n, known: known}
	}
	return sizedDiff{size: n, known: known}
}

func sortDiffs(r *Report) {
	sort.Slice(r.Diffs, func(i, j int) bool { return r.Diffs[i].Path < r.Diffs[j].Path })
}

// HashFiles hashes the regular files rels below root (from the page cache:
// they were just checked or are trusted) and returns them as manifest
// entries. Files that cannot be read are returned as Diffs of kind Failed.
func HashFiles(ctx context.Context, root string, rels []string, opt TreeOptions) ([]verify.ManifestEntry, []Diff, error) {
	d, err := fileio.OpenDir(root)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	n := opt.Jobs
	if n <= 0 {
		n = 4
	}
	out := make([]verify.ManifestEntry, len(rels))
	var diffs []Diff
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan int)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, verify.BufSize)
			for i := range ch {
				s, _, _, err := hashAt(d, rels[i], !opt.FromCache, buf, nil)
				if err != nil {
					mu.Lock()
					diffs = append(diffs, Diff{Path: rels[i], Kind: Failed, Detail: err.Error()})
					mu.Unlock()
					continue
				}
				out[i] = verify.ManifestEntry{Sum: s, Path: rels[i]}
			}
		}()
	}
	for i := range rels {
		select {
		case ch <- i:
		case <-ctx.Done():
			close(ch)
			wg.Wait()
			return nil, nil, ctx.Err()
		}
	}
	close(ch)
	wg.Wait()
	kept := out[:0]
	for _, e := range out {
		if e.Path != "" {
			kept = append(kept, e)
		}
	}
	return kept, diffs, nil
}
