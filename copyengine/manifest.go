package copyengine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/verify"
)

// needSum says whether every copied file's source digest must be computed:
// for the read-back, or for a manifest.
func (e *engine) needSum() bool {
	return e.opt.Verify != VerifyOff || e.opt.Manifest != ""
}

// recordSum notes a file placed with a known digest, for the manifest.
func (e *engine) recordSum(rel string, sum verify.Sum) {
	if e.opt.Manifest == "" {
		return
	}
	e.mu.Lock()
	e.manifest = append(e.manifest, verify.ManifestEntry{Sum: sum, Path: rel})
	e.mu.Unlock()
}

// wantManifest says whether this run writes a manifest.
func (e *engine) wantManifest() bool { return e.opt.Manifest != "" && !e.opt.DryRun }

// recordUnchanged notes, for the manifest, a regular file found unchanged
// without being read, and returns the digest it lists: its source's. The
// decision that it is unchanged took that digest from the cache (both
// sides' valid entries equal); an empty file needs none. Any other case
// read the file (checkEntry) and never comes here while a manifest is
// written.
func (e *engine) recordUnchanged(rel string, en *entry) verify.Sum {
	if !e.wantManifest() {
		return verify.Sum{}
	}
	switch {
	case en.st.Size == 0:
		sum := verify.Bytes(nil)
		e.recordSum(rel, sum)
		return sum
	case en.cache != nil && en.cache.srcOK && en.cache.dstOK:
		e.recordSum(rel, en.cache.src)
		return en.cache.src
	}
	e.fail(rel, errors.New("no digest of the source for the manifest"))
	return verify.Sum{}
}

// writeManifest writes the manifest atomically: a temporary beside it,
// flushed, renamed onto its name. Every line's digest is a source's: read
// this run, or from its valid cache entry.
func (e *engine) writeManifest() error {
	if !e.wantManifest() {
		return nil
	}
	dir := filepath.Dir(e.opt.Manifest)
	f, err := os.CreateTemp(dir, "."+filepath.Base(e.opt.Manifest)+".*"+tempSuffix)
	if err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = verify.WriteManifest(f, e.manifest)
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

// checkManifestPath refuses a manifest path the copy itself writes: the
// copy of a source entry (the manifest would replace that copy, or the
// copy the manifest), or a path below the copy of a source entry that is
// not a directory. A manifest elsewhere inside DEST is a file of DEST the
// source does not have, which the copy leaves alone.
func (e *engine) checkManifestPath(p *plan) error {
	if e.opt.Manifest == "" || e.opt.DryRun {
		return nil
	}
	m := realPath(e.opt.Manifest)
	collides := func(what string) error {
		return refuse(e.opt.Manifest, "is where the copy of "+quote(what)+" goes: the manifest and the copy would replace each other", "choose a manifest path the copy does not write, outside DEST or on a name the source does not have")
	}
	for _, r := range p.roots {
		land := realPath(filepath.Join(p.dstRoot, r.dstRel))
		if m == land {
			return collides(r.src) // a file's copy, or a directory the manifest cannot replace
		}
		if !r.isDir {
			continue
		}
		rel, ok := strings.CutPrefix(m, strings.TrimSuffix(land, string(filepath.Separator))+string(filepath.Separator))
		if !ok {
			continue
		}
		parts := strings.Split(rel, string(filepath.Separator))
		src, srcRel := r.srcDir, ""
		for i, part := range parts {
			src, srcRel = filepath.Join(src, part), joinRel(srcRel, part)
			if e.excluded(srcRel) {
				break
			}
			st, err := os.Lstat(src)
			if err == nil && e.opt.Dereference {
				st, err = os.Stat(src)
			}
			if err != nil {
				break
			}
			if i == len(parts)-1 || !st.IsDir() {
				return collides(src)
			}
		}
	}
	return nil
}
