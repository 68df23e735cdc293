package readorder

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Order says in which order a run reads its source files. On a disk
// that seeks, reading files in the order their data lies on the disk
// turns a seek per file into one sweep; on an SSD or a network
// filesystem the order does not matter and the listing order keeps the
// copy's progress easy to follow. It is a pflag.Value: Set parses and
// validates, so a flag and a library caller get the same checks.
type Order string

// The read orders.
const (
	// Auto reads in disk order when the source is on a
	// rotational or USB disk, and in listing order otherwise (see
	// Choose).
	Auto Order = "auto"
	// Disk reads each window of pending files in the order of
	// the place of their first data on the device (FIEMAP), then by
	// inode number, then in listing order.
	Disk Order = "disk"
	// Inode reads each window in inode-number order, then in
	// listing order: where the place of the data is unknown, inode
	// numbers still follow the order in which files were created, which
	// on many filesystems is close to where their data went.
	Inode Order = "inode"
	// Listing reads files in the order the walk lists them
	// (directory by directory, names sorted).
	Listing Order = "listing"
)

// String returns the order's name ("auto" for the zero value).
func (o Order) String() string {
	if o == "" {
		return string(Auto)
	}
	return string(o)
}

// Set parses s as a read order: auto, disk, inode or listing.
func (o *Order) Set(s string) error {
	switch v := Order(s); v {
	case Auto, Disk, Inode, Listing:
		*o = v
		return nil
	}
	return fmt.Errorf("must be auto, disk, inode or listing, not %q", s)
}

// Type names the value's kind for help text.
func (o *Order) Type() string { return "order" }

// Choose resolves o for a source at src and says why, for -v and
// --json: an order given explicitly is kept; auto becomes disk order on a
// rotational or USB disk (as ChooseJobs picks one stream there) and
// listing order on anything else.
func Choose(o Order, src string) (Order, string) {
	if o != "" && o != Auto {
		return o, "set by --order"
	}
	return forDevice(fileio.DeviceOf(src))
}

// forDevice is the auto rule for a source on dev.
func forDevice(dev fileio.Device) (Order, string) {
	if dev.USB || (dev.Rotational && !dev.Virtual) {
		return Disk, "source on " + dev.String() + ": files are read in the order their data lies on the disk, to avoid seeks"
	}
	return Listing, "source on " + dev.String() + ": files are read in listing order, seeks cost little"
}

// Key is what ordering needs to know of a pending source file.
type Key struct {
	Phys  int64  // byte offset of the file's first data on its device (fileio PhysicalStart)
	Known bool   // Phys is known
	Ino   uint64 // inode number (0 when the platform has none)
	Index int64  // position in listing order, unique within a run
}

// compare orders two keys for order (disk or inode). In disk order,
// files with a known place come first, by place; a tie, or two files of
// unknown place (no data, data kept in the inode, not yet allocated, no
// FIEMAP), falls back to inode order. Inode order falls back to listing
// order, which decides every remaining tie, so the result is the same
// whatever order the window arrived in.
func compare(order Order, a, b Key) int {
	if order == Disk {
		if a.Known != b.Known {
			if a.Known {
				return -1
			}
			return 1
		}
		if a.Known {
			if c := cmp.Compare(a.Phys, b.Phys); c != 0 {
				return c
			}
		}
	}
	if order == Disk || order == Inode {
		if c := cmp.Compare(a.Ino, b.Ino); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Index, b.Index)
}

// Window bounds of Window: a window holds at most this many files, or
// this much of the callers' own accounting of each file's pending
// metadata (names, stat, the open descriptor's bookkeeping), whichever
// comes first. 100,000 files cover most trees in one window; the bytes
// bound keeps a tree of very long names from holding more.
const (
	WindowFiles = 100_000
	WindowBytes = 256 << 20
)

// Window gathers pending source files, in listing order, into windows
// and hands each window back in read order: bounded memory, whatever the
// size of the tree, at the price of one sweep of the disk per window. In
// listing order it holds nothing: each file comes straight back.
type Window[T any] struct {
	order    Order // disk, inode or listing (resolved, never auto)
	maxFiles int
	maxBytes int64

	items []pending[T]
	bytes int64
	out   []T
}

type pending[T any] struct {
	key  Key
	item T
}

// NewWindow returns a window for order (auto counts as listing: the
// caller resolves it first, see Choose) with the given bounds;
// bounds of 0 or less take the defaults.
func NewWindow[T any](order Order, maxFiles int, maxBytes int64) *Window[T] {
	if order != Disk && order != Inode {
		order = Listing
	}
	if maxFiles <= 0 {
		maxFiles = WindowFiles
	}
	if maxBytes <= 0 {
		maxBytes = WindowBytes
	}
	return &Window[T]{order: order, maxFiles: maxFiles, maxBytes: maxBytes}
}

// Add takes the next file in listing order, with its key and the bytes of
// metadata it holds while pending. When that fills the window (or in
// listing order, at once) it returns the files to read now, in read
// order; otherwise nil. The slice is valid until the next call.
func (w *Window[T]) Add(item T, key Key, metaBytes int64) []T {
	if w.order == Listing {
		w.out = append(w.out[:0], item)
		return w.out
	}
	w.items = append(w.items, pending[T]{key: key, item: item})
	w.bytes += max(metaBytes, 0)
	if len(w.items) >= w.maxFiles || w.bytes >= w.maxBytes {
		return w.Flush()
	}
	return nil
}

// Flush returns the files still pending, in read order (nil when none),
// and starts a new window: the caller flushes at the end of the walk, and
// may flush early when nothing is being read (so that reading never waits
// for a window to fill while the disk is idle). The slice is valid until
// the next call.
func (w *Window[T]) Flush() []T {
	if len(w.items) == 0 {
		return nil
	}
	slices.SortFunc(w.items, func(a, b pending[T]) int { return compare(w.order, a.key, b.key) })
	w.out = w.out[:0]
	for i := range w.items {
		w.out = append(w.out, w.items[i].item)
		var zero pending[T]
		w.items[i] = zero // let go of the item
	}
	w.items = w.items[:0]
	w.bytes = 0
	return w.out
}

// Pending returns how many files wait in the current window.
func (w *Window[T]) Pending() int { return len(w.items) }

// WindowDirs is the most source directories a read window keeps
// open for the process's descriptor limit (0: unknown): an eighth of it,
// between 64 and 4,096 (each comes with its destination directory, and
// the look-ahead's budget is a quarter).
func WindowDirs(limit int) int {
	if limit <= 0 {
		return 128
	}
	return min(max(limit/8, 64), 4096)
}

// DirQueue is a walk's queue of directories in disk and inode order: the
// directory of lowest inode number first (in the order pushed among
// equals), so that a tree whose directories were made in order is listed
// in one sweep of its inode tables. The zero value is an empty queue.
type DirQueue[T any] struct {
	items dirHeap[T]
	seq   int64
}

type queuedDir[T any] struct {
	w   T
	ino uint64
	seq int64
}

type dirHeap[T any] []queuedDir[T]

func (h dirHeap[T]) Len() int { return len(h) }
func (h dirHeap[T]) Less(i, j int) bool {
	a, b := h[i], h[j]
	if c := cmp.Compare(a.ino, b.ino); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}
func (h dirHeap[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dirHeap[T]) Push(x any)   { *h = append(*h, x.(queuedDir[T])) }
func (h *dirHeap[T]) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// Len is how many directories wait.
func (q *DirQueue[T]) Len() int { return len(q.items) }

// Push adds w, a directory of inode number ino.
func (q *DirQueue[T]) Push(w T, ino uint64) {
	q.seq++
	heap.Push(&q.items, queuedDir[T]{w: w, ino: ino, seq: q.seq})
}

// Pop takes the directory of lowest inode number (the first pushed among
// equals). The queue must not be empty.
func (q *DirQueue[T]) Pop() T { return heap.Pop(&q.items).(queuedDir[T]).w }

// StatOrder returns the indices of names in the order to stat them: by
// inode number where the listing gives it, then in listing order; the
// names skip answers true for are left out.
func StatOrder(names []fileio.DirEntry, skip func(i int) bool) []int {
	idx := make([]int, 0, len(names))
	for i := range names {
		if !skip(i) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(names[a].Ino, names[b].Ino) })
	return idx
}
