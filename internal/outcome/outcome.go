package outcome

import (
	"strconv"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Kind is what became of an entry.
type Kind uint8

const (
	// Placed: the entry took its final name (copied, cloned, shared
	// with a duplicate, linked to a --link-dest counterpart, a symlink or
	// special file made), or a dry run would place it.
	Placed Kind = iota + 1
	// Skipped: the destination already held it.
	Skipped
	// Fixed: the destination already held its data; its times, mode or
	// owner were brought up to date.
	Fixed
	// Linked: a further name of a source inode, made (or found) a hard
	// link to the name placed first.
	Linked
	// Failed: the entry did not make it; Err says why.
	Failed
	// Removed: an entry removed (by --delete, or a source by --move).
	Removed
)

var kindNames = [...]string{"", "placed", "skipped", "fixed", "linked", "failed", "removed"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Outcome is what became of one entry.
type Outcome struct {
	Kind Kind
	// Action is how (copy, clone, dedup-link, symlink, link-dest, ...):
	// the action of the event it is reported as (EventOf). Kind is what
	// the listeners that do not care how look at.
	Action Action
	// LinkCopy says a Placed copy or clone is a further name of a source
	// inode copied as a file of its own (the destination has no hard
	// links).
	LinkCopy bool
	Path     string // below the destination, '/'-separated
	Size     int64  // the file's length (0 for what holds no data)
	// Sum is the file's xxh128, zero when the run does not know it;
	// Extra its digests in the other formats the records asked for, by
	// format name.
	Sum   verify.Sum
	Extra map[string]string
	// Listed says the records (manifest, ASC MHL generation, bag) list
	// the file with Sum and Extra: the run read it, or vouches for it.
	Listed bool
	// Dest is the destination file as placed and verified, for the hash
	// cache to remember; nil when there is nothing to remember.
	Dest *Dest
	Err  error // why it failed (Failed)
}

// Dest is a destination file whose content was found to be Sum: its
// cache key, its stat after it took its name, when the read that found
// its digest began (Started) and when its bytes were read from the
// device (ReadAt, unix nanoseconds; 0 when not known).
type Dest struct {
	Key     string
	Stat    *fileio.Stat
	Started time.Time
	ReadAt  int64
}

// Listener hears every outcome. It is called from several goroutines at
// once and must not keep o.
type Listener func(o *Outcome)

// Hub hands each outcome to its listeners. Subscribe before the first
// Report; Report may then be called from any goroutine.
type Hub struct {
	listeners []Listener
}

// Subscribe adds l; the listeners hear each outcome in the order they
// subscribed.
func (h *Hub) Subscribe(l Listener) { h.listeners = append(h.listeners, l) }

// Report hands o to every listener.
func (h *Hub) Report(o *Outcome) {
	for _, l := range h.listeners {
		l(o)
	}
}
