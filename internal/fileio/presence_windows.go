package fileio

import (
	"os"
	"sync"

	"golang.org/x/sys/windows"
)

// A Presence is a file that every user of a shared resource holds a shared
// lock on for as long as it uses it, so that one of them can tell whether
// it is the only one (Alone) without any other process's help. Here the
// lock is LockFileEx's on the file's first byte (the Unix one is flock's);
// the file is opened with OpenShared, so that `cache clear` can remove it
// while users hold it.
type Presence struct {
	path string
	mu   sync.Mutex // guards f, which Alone renews
	f    *os.File
}

// OpenPresence opens (creating it) the presence file at path and takes its
// shared lock, waiting while another user checks whether it is alone (an
// instant). One that exists but cannot be opened for writing is opened for
// reading: the lock needs no more.
func OpenPresence(path string) (*Presence, error) {
	f, err := openPresence(path)
	if err != nil {
		return nil, err
	}
	return &Presence{path: path, f: f}, nil
}

func openPresence(path string) (*os.File, error) {
	f, err := OpenShared(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if f, err = OpenShared(path, os.O_RDONLY, 0); err != nil {
			return nil, err
		}
	}
	if err := lockByte(f, 0); err != nil {
		f.Close()
		return nil, pathErr("lock", path, err)
	}
	return f, nil
}

// lockByte locks the first byte of f with flags (0: shared, waiting).
func lockByte(f *os.File, flags uint32) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
}

func unlockByte(f *os.File) {
	var ol windows.Overlapped
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// Alone reports whether no other user holds the presence file. A lock
// cannot be converted here: the shared one is dropped, an exclusive one
// tried without waiting (and dropped), and the shared one taken again. A
// nil Presence is never alone. Nor is one whose file is no longer the one
// at its path (removed or replaced): the users that came since hold
// another, which this one takes instead, so that they see it from now on.
func (p *Presence) Alone() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.current() {
		if f, err := openPresence(p.path); err == nil {
			p.f.Close()
			p.f = f
		}
		return false
	}
	unlockByte(p.f)
	alone := lockByte(p.f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY) == nil
	if alone {
		unlockByte(p.f)
	}
	_ = lockByte(p.f, 0)
	return alone
}

// current reports whether the file at p's path is still the one p holds.
func (p *Presence) current() bool {
	held, err := p.f.Stat()
	if err != nil {
		return false
	}
	cur, err := os.Stat(p.path)
	return err == nil && os.SameFile(held, cur)
}

// Close lets the presence file go.
func (p *Presence) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.f.Close()
}
