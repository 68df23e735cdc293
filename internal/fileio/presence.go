package fileio

import (
	"os"
	"sync"
)

// A Presence is a file that every user of a shared resource holds a shared
// lock on for as long as it uses it, so that one of them can tell whether
// it is the only one (Alone) without any other process's help. The lock
// is flock's on Unix and LockFileEx's on the file's first byte on Windows,
// where the file is opened with OpenShared so that `cache clear` can
// remove it while users hold it (presence_unix.go, presence_windows.go).
type Presence struct {
	path string
	mu   sync.Mutex // guards f, which Alone renews
	f    *os.File
}

// OpenPresence opens (creating it, mode 0600) the presence file at path
// and takes its shared lock, waiting while another user checks whether it
// is alone (an instant). One that exists but cannot be opened for writing
// (a directory or file this user may only read) is opened for reading:
// the lock needs no more.
func OpenPresence(path string) (*Presence, error) {
	f, err := openPresence(path)
	if err != nil {
		return nil, err
	}
	return &Presence{path: path, f: f}, nil
}

// Alone reports whether no other user holds the presence file (aloneNow
// tries the lock exclusive without waiting, and leaves it shared either
// way). A nil Presence is never alone. Nor is one whose file is no longer
// the one at its path (removed or replaced): the users that came since
// hold another, which this one takes instead, so that they see it from
// now on.
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
	return aloneNow(p.f)
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
