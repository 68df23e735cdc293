package preflight

import (
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Dest is one destination of a run that copies to several: its root, as
// planned (Plan.DstRoot), and the manifest it writes ("" for none).
type Dest struct{ Root, Manifest string }

// CheckDests refuses destinations of one run that are not apart (Apart),
// two that would write one manifest, and a manifest that would lie inside
// another destination (one inside its own is the run's own check, as for
// a run alone: records.Options.CheckPlan).
func CheckDests(ds []Dest) error {
	for i := range ds {
		for j := range i {
			if err := Apart(ds[j].Root, ds[i].Root); err != nil {
				return err
			}
			if ds[i].Manifest != "" && fileio.RealPath(ds[i].Manifest) == fileio.RealPath(ds[j].Manifest) {
				return refusal.New(ds[i].Manifest, "two destinations would write this one manifest", "give each destination its own manifest")
			}
		}
		for j := range ds {
			if m := ds[i].Manifest; j != i && m != "" && (Beneath(fileio.RealPath(ds[j].Root), fileio.RealPath(m)) || In(m, ds[j].Root)) {
				return refusal.New(m, `the manifest would lie inside the destination "`+ds[j].Root+`"`, "write it outside every destination")
			}
		}
	}
	return nil
}
