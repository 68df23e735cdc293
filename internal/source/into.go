package source

import (
	"fmt"
	"path/filepath"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Into refuses the source directory rel below root, of stat st, when it
// is one the run writes in (Holds): reached through -L (a symlink to a
// directory above DEST) or a mount, copying it would copy the copy.
func (s *Dests) Into(st *fileio.Stat, root, rel string) error {
	if !s.Holds(st) {
		return nil
	}
	return fmt.Errorf("cannot copy a directory into itself: %q is a directory this run writes in", filepath.Join(root, rel))
}
