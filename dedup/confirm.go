package dedup

import (
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// ConfirmDest is, for a dry run's duplicate whose destination is own (nil
// when DEST holds none), the proof the real run asks of a file DEST held
// before the run (Confirm): the target must still be as the cache recorded
// it (Find) and still hold the digest (hash reads it again, as the real
// run reads it), and not be the duplicate's own destination. Without
// OpenDir (no DEST yet) nothing is confirmed.
func (pf Proof) ConfirmDest(own *fileio.Stat, hash func(td *fileio.Dir, name string) (verify.Sum, error)) Confirm {
	return func(t *Target, sum verify.Sum) (Meta, bool) {
		if pf.OpenDir == nil {
			return Meta{}, false
		}
		found, ok := pf.Find(t)
		if !ok {
			return Meta{}, false
		}
		defer found.Close()
		cur := found.Cur
		if own != nil && own.Dev == cur.Dev && own.Ino == cur.Ino {
			return Meta{}, false
		}
		got, err := hash(found.Dir, found.Name)
		if err != nil || got != sum {
			return Meta{}, false
		}
		return FoundMeta(&cur), true
	}
}
