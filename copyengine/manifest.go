package copyengine

import (
	"fmt"
	"os"
	"path/filepath"

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

// recordUnhashed notes a file in place whose digest this run did not
// compute (unchanged, or a hard link); it is hashed before the manifest is
// written.
func (e *engine) recordUnhashed(rel string) {
	if e.opt.Manifest == "" {
		return
	}
	e.mu.Lock()
	e.unhashed = append(e.unhashed, rel)
	e.mu.Unlock()
}

// writeManifest hashes what the run did not, then writes the manifest
// atomically: a temporary beside it, flushed, renamed onto its name.
func (e *engine) writeManifest() error {
	if e.opt.Manifest == "" || e.opt.DryRun {
		return nil
	}
	if len(e.unhashed) > 0 {
		got, failed, err := verify.HashFiles(e.ctx, e.dstRootPath, e.unhashed, verify.TreeOptions{Jobs: e.verifyWorkers()})
		if err != nil {
			return err
		}
		for _, d := range failed {
			e.fail(d.Path, fmt.Errorf("hashing for the manifest: %s", d.Detail))
		}
		e.manifest = append(e.manifest, got...)
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
