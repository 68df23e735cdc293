package copyengine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/verify"
)

// needSum says whether every copied file's source digest must be computed:
// for the read-back, or for a manifest or an ASC MHL generation.
func (e *engine) needSum() bool {
	return e.opt.Verify != VerifyOff || e.listsSums()
}

// listsSums says whether the run lists the digest of every file it puts or
// finds in place: for a manifest (--manifest) or an ASC MHL generation
// (--mhl). Such a run decides as --checksum where the cache cannot vouch
// for a file found unchanged, so that it knows each digest.
func (e *engine) listsSums() bool { return e.opt.Manifest != "" || e.opt.MHL || e.opt.Bag }

// recordSum notes a file placed with a known digest, for the manifest and
// the ASC MHL generation.
func (e *engine) recordSum(rel string, sum verify.Sum, extra map[string]string) {
	if !e.listsSums() {
		return
	}
	e.mu.Lock()
	e.manifest = append(e.manifest, listed{path: rel, sum: sum, extra: extra})
	e.mu.Unlock()
}

// wantManifest says whether this run writes a manifest.
func (e *engine) wantManifest() bool { return e.opt.Manifest != "" && !e.opt.DryRun }

// wantSums says whether this run writes a list of digests: a manifest or
// an ASC MHL generation.
func (e *engine) wantSums() bool { return e.listsSums() && !e.opt.DryRun }

// recordUnchanged notes, for the manifest or the ASC MHL generation, a
// regular file found unchanged without being read, and returns the digest
// it lists: its source's. The decision that it is unchanged took that
// digest from the cache (both sides' valid entries equal); an empty file
// needs none. Any other case read the file (checkEntry) and never comes
// here while a manifest or a generation is written.
func (e *engine) recordUnchanged(rel string, en *entry) verify.Sum {
	if !e.wantSums() {
		return verify.Sum{}
	}
	switch {
	case en.st.Size == 0:
		sum := verify.Bytes(nil)
		en.extra = e.emptyExtras()
		e.recordSum(rel, sum, en.extra)
		return sum
	case en.cache != nil && en.cache.srcOK && en.cache.dstOK:
		e.recordSum(rel, en.cache.src, en.extra) // lookupCache took en.extra from the source's entry
		return en.cache.src
	}
	e.fail(rel, errors.New("no digest of the source for the manifest or the ASC MHL history"))
	return verify.Sum{}
}

// writeManifest writes the manifest atomically: a temporary beside it,
// flushed, renamed onto its name. Every line's digest is a source's: read
// this run, or from its valid cache entry.
func (e *engine) writeManifest() error {
	if !e.wantManifest() {
		return nil
	}
	dir := manifestDir(e.opt.Manifest)
	f, err := os.CreateTemp(dir, "."+filepath.Base(e.opt.Manifest)+".*"+tempSuffix)
	if err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = e.writeManifestLines(f)
	if err == nil && !e.opt.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, e.opt.Manifest)
	}
	if err != nil {
		return fmt.Errorf("writing manifest %q: %w", e.opt.Manifest, err)
	}
	return nil
}

// checkManifestPath refuses a manifest whose directory is DEST or lies
// inside it: there it is either a file the source does not have (a tree
// comparison counts it) or the name of a copy (the manifest replaces it).
// Strings cannot decide this: case folding, a symlink, a bind mount of
// DEST or of a directory in it, or a --names mapping reach one file by
// several spellings. So the manifest's nearest existing directory is
// compared with DEST by identity (checkOutside).
func (e *engine) checkManifestPath(p *plan) error {
	if e.opt.Manifest == "" || e.opt.DryRun {
		return nil
	}
	inside := func() error {
		return refuse(e.opt.Manifest, "is inside the destination "+quote(p.dstRoot)+": the copy would count it as a file the source does not have, or it would replace a copy", "write the manifest outside the destination")
	}
	return checkOutside(e.opt.Manifest, p.dstRoot, inside)
}

// checkOutside returns refusal() when the path lies in the directory
// dstRoot or is it, by identity (overlapInside: through symlinks, ".."
// as the kernel resolves it, bind mounts and second mounts), else nil.
// A path that goes up from a directory not made yet is refused as such.
func checkOutside(path, dstRoot string, refusal func() error) error {
	if _, err := argPath(path); err != nil {
		return err
	}
	if in, err := overlapInside(path, dstRoot); err == nil && in {
		return refusal()
	}
	return nil
}

// manifestDir is the directory a manifest path names, cut at its last
// separator without cleaning: "a/link/../m" is in "a/link/..", which the
// kernel resolves through the link's target, as it does when the manifest
// is renamed onto its name.
func manifestDir(p string) string {
	i := strings.LastIndexByte(p, filepath.Separator)
	switch {
	case i < 0:
		return "."
	case i == 0:
		return string(filepath.Separator)
	}
	return p[:i]
}

// writeManifestLines writes the manifest's lines in its format: xxhsum -H2
// for xxh128, else the line format of the coreutils tool of that format
// (sha256sum, md5sum, b3sum), which is the same "<hex>  <path>" with the
// same escaping. A path listed twice is listed with its last digest.
func (e *engine) writeManifestLines(w io.Writer) error {
	format := e.opt.manifestFormat()
	lines, err := e.listedLines(format)
	if err != nil {
		return err
	}
	return verify.WriteDigests(w, lines)
}

// listedLines is each path the run listed with its digest in format,
// sorted by path; the last digest recorded for a path counts. A path
// without a digest in that format fails by name and is left out.
func (e *engine) listedLines(format string) ([]verify.DigestLine, error) {
	e.mu.Lock()
	last := make(map[string]listed, len(e.manifest))
	for _, m := range e.manifest {
		last[m.path] = m
	}
	e.mu.Unlock()
	lines := make([]verify.DigestLine, 0, len(last))
	for _, m := range last {
		d, ok := m.digestOf(format)
		if !ok {
			e.fail(m.path, errNoDigest(format))
			continue
		}
		lines = append(lines, verify.DigestLine{Digest: d, Path: m.path})
	}
	return lines, nil
}
