package copyengine

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fastcopy/fastcopy/copyengine/fileio"
)

// lockDest keeps other runs out of the tree of the destination root d
// (named name): a shared lock on every directory above d, then an
// exclusive lock on d. A run into d, or into a directory above it, wants
// an exclusive lock that one of these refuses; a run into a directory
// below it wants a shared lock on d, which the exclusive lock refuses.
// Runs into separate trees share the locks above them. So no run ever
// removes another's temporaries or staged directories as its leftovers.
// Whichever of two nested runs asks second is refused (ErrLocked), so the
// check needs no list of runs: each walks up from its own root.
//
// The walk up opens ".." from each directory in turn, so it follows the
// tree as the kernel resolves it (symlinks in the named path do not
// matter), and stops at the root, or at a directory it cannot open or
// lock (a platform without shared directory locks, an unreadable
// directory): above that, nesting goes unnoticed. The returned release
// closes what it holds, dropping the locks above d (d's own lock goes
// with d).
func lockDest(d *fileio.Dir, name string) (release func(), err error) {
	var held []*fileio.Dir
	release = func() {
		for _, a := range held {
			a.Close()
		}
	}
	abs, aerr := filepath.Abs(name)
	if aerr != nil {
		abs = name
	}
	cur, above := d, abs
	st, serr := d.Stat()
	for serr == nil {
		up, err := cur.Parent()
		if err != nil {
			break
		}
		ust, err := up.Stat()
		if err != nil || (ust.Dev == st.Dev && ust.Ino == st.Ino) {
			up.Close()
			break // the root: its ".." is itself
		}
		above = filepath.Dir(above)
		if err := up.LockShared(); errors.Is(err, fileio.ErrLocked) {
			up.Close()
			release()
			return nil, fmt.Errorf("%q: %w: it writes into %q, above it", name, ErrLocked, above)
		} else if errors.Is(err, fileio.ErrUnsupported) {
			up.Close()
			break
		}
		// Another error (no locks on this filesystem): on up, unlocked.
		held = append(held, up)
		cur, st = up, ust
	}
	if err := d.Lock(); err != nil {
		release()
		if errors.Is(err, fileio.ErrLocked) {
			return nil, fmt.Errorf("%q: %w (it writes into it, or below it)", name, ErrLocked)
		}
		return nil, err
	}
	return release, nil
}
