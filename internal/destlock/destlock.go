package destlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// ErrDestLocked is refusal.ErrLocked in the words a destination's messages
// use: Lock and Make wrap it.
var ErrDestLocked error = refusal.Locked("destination is locked by another fastcopy")

// Lock keeps other runs out of the tree of the destination root d
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
// with d). The exclusive lock on d is asked for again for up to wait when
// it is found held (see BusyFor).
func Lock(d *fileio.Dir, name string, wait time.Duration) (release func(), err error) {
	abs, aerr := filepath.Abs(name)
	if aerr != nil {
		abs = name
	}
	held, err := lockShared(d, name, abs, false)
	release = func() { closeAll(held) }
	if err != nil {
		return nil, err
	}
	if err := lockBusy(func() error { return fileio.Lock(d) }, wait); err != nil {
		release()
		if errors.Is(err, fileio.ErrLocked) {
			return nil, fmt.Errorf("%q: %w (it writes into it, or below it)", name, ErrDestLocked)
		}
		return nil, err
	}
	return release, nil
}

// lockShared takes a shared lock on every directory above d (d is at abs,
// for messages about the run dest), and on d itself when self, as
// Lock describes. It returns what it opened and holds (not d), or
// ErrLocked, holding nothing, when one of them is another run's
// destination.
func lockShared(d *fileio.Dir, dest, abs string, self bool) (held []*fileio.Dir, err error) {
	locked := func(at string) error {
		closeAll(held)
		return fmt.Errorf("%q: %w: it writes into %q, above it", dest, ErrDestLocked, at)
	}
	if self {
		if err := fileio.LockShared(d); errors.Is(err, fileio.ErrLocked) {
			return nil, locked(abs)
		} else if errors.Is(err, fileio.ErrUnsupported) {
			return nil, nil
		}
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
		if err := fileio.LockShared(up); errors.Is(err, fileio.ErrLocked) {
			up.Close()
			return nil, locked(above)
		} else if errors.Is(err, fileio.ErrUnsupported) {
			up.Close()
			break
		}
		// Another error (no locks on this filesystem): on up, unlocked.
		held = append(held, up)
		cur, st = up, ust
	}
	return held, nil
}

// BusyFor is how long a run asks again for its destination's lock when
// it finds it held, where waiting is safe (the engine waits for a destination that existed
// when the run was planned, without --delete). A process
// that forks holds a copy of each of its descriptors, the locked ones too,
// until the child execs: a lock just released by a run of the same process
// can seem held for that instant. A run into a destination another run
// holds is refused after this wait.
const BusyFor = 100 * time.Millisecond

// lockBusy calls lock until it does not fail with fileio.ErrLocked, for
// up to wait.
func lockBusy(lock func() error, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := lock()
		if !errors.Is(err, fileio.ErrLocked) || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func closeAll(ds []*fileio.Dir) {
	for _, d := range ds {
		d.Close()
	}
}

// Make creates the destination root dest and its missing parents
// without entering another run's tree: first a shared lock on its nearest
// existing ancestor and on every directory above that (ErrLocked, nothing
// created, when one of them is another run's destination), then each
// missing directory, made through its parent's descriptor and locked
// shared as soon as it is made, then dest itself, which it returns open
// for Lock. A run into a directory below dest that starts between a
// directory's mkdir and its lock is the one window left. release drops
// the shared locks; the caller closes the returned directory. openRoot
// opens the directories named by path (the engine's Options.openRoot).
func Make(dest string, openRoot func(string) (*fileio.Dir, error)) (d *fileio.Dir, release func(), err error) {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return nil, nil, err
	}
	base, missing := abs, []string(nil)
	for {
		st, err := os.Stat(base) // the user's path: symlinks in it are followed, as mkdir -p does
		if err == nil {
			if !st.IsDir() {
				return nil, nil, &os.PathError{Op: "mkdir", Path: base, Err: errors.New("not a directory")}
			}
			break
		}
		parent := filepath.Dir(base)
		if !errors.Is(err, os.ErrNotExist) || parent == base {
			return nil, nil, err
		}
		missing = append([]string{filepath.Base(base)}, missing...)
		base = parent
	}
	cur, err := openRoot(base)
	if err != nil {
		return nil, nil, err
	}
	// base itself is locked shared only when it is above dest: dest, made
	// meanwhile by another run, is for Lock to lock exclusively, and a
	// shared lock of ours on it would refuse both runs.
	held, err := lockShared(cur, dest, base, len(missing) > 0)
	if err != nil {
		cur.Close()
		return nil, nil, err
	}
	held = append(held, cur)
	release = func() { closeAll(held) }
	at := base
	for i, name := range missing {
		at = filepath.Join(at, name)
		if err := cur.Mkdir(name, 0o755); err != nil && !fileio.IsExist(err) {
			release()
			return nil, nil, err
		}
		next, err := cur.OpenSub(name)
		if err != nil {
			release()
			return nil, nil, err
		}
		if i == len(missing)-1 {
			return next, release, nil // dest: Lock locks it
		}
		if err := fileio.LockShared(next); errors.Is(err, fileio.ErrLocked) {
			next.Close()
			release()
			return nil, nil, fmt.Errorf("%q: %w: it writes into %q, above it", dest, ErrDestLocked, at)
		}
		held = append(held, next)
		cur = next
	}
	// Nothing was missing: dest appeared since the plan was made.
	d, err = openRoot(abs)
	if err != nil {
		release()
		return nil, nil, err
	}
	return d, release, nil
}
