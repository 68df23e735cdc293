package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
)

// loadMade reads the record of what runs made in the destination root d,
// at path (internal/made), which the run then keeps true: a leftover is
// taken for a run's own only when the record names it.
func (e *engine) loadMade(d *fileio.Dir, path string) {
	e.made = made.Load(made.Config{
		Root:         d,
		Path:         path,
		NoSync:       e.opt.NoSync,
		SkipWrite:    e.skipWrite,
		UID:          e.euid,
		Cleaned:      func(rel string) { e.event(ActCleanTmp, rel) },
		KeepDirTimes: destfs.KeepDirTimes,
	})
}
