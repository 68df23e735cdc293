package copyengine

import (
	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/preflight"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// checkSpace refuses a run that cannot fit on the destination, before the
// first byte is written (preflight.CheckSpace says how it counts).
func (e *engine) checkSpace(p *plan) error {
	return preflight.CheckSpace(e.ctx, preflight.SpaceConfig{
		DstRoot:     p.dstRoot,
		Roots:       p.preflightRoots(),
		OpenRoot:    e.opt.openRoot,
		Excluded:    e.excluded,
		Dereference: e.opt.Dereference,
		Dedup:       e.opt.Dedup != dedup.Off,
		Resumable:   e.copier.resume().Resumable,
		TempName:    destfs.TempName,
		MaxFileSize: destfs.MaxFileSize,
	})
}

// HumanBytes is n in binary units, as messages and reports give sizes:
// "61.2 GiB".
func HumanBytes(n int64) string { return refusal.HumanBytes(n) }
