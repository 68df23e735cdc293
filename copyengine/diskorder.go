package copyengine

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// ReadOrder says in which order a run reads its source files. On a disk
// that seeks, reading files in the order their data lies on the disk
// turns a seek per file into one sweep; on an SSD or a network
// filesystem the order does not matter and the listing order keeps the
// copy's progress easy to follow. It is a pflag.Value: Set parses and
// validates, so a flag and a library caller get the same checks.
type ReadOrder string

// The read orders.
const (
	// ReadOrderAuto reads in disk order when the source is on a
	// rotational or USB disk, and in listing order otherwise (see
	// ChooseReadOrder).
	ReadOrderAuto ReadOrder = "auto"
	// ReadOrderDisk reads each window of pending files in the order of
	// the place of their first data on the device (FIEMAP), then by
	// inode number, then in listing order.
	ReadOrderDisk ReadOrder = "disk"
	// ReadOrderInode reads each window in inode-number order, then in
	// listing order: where the place of the data is unknown, inode
	// numbers still follow the order in which files were created, which
	// on many filesystems is close to where their data went.
	ReadOrderInode ReadOrder = "inode"
	// ReadOrderListing reads files in the order the walk lists them
	// (directory by directory, names sorted).
	ReadOrderListing ReadOrder = "listing"
)

// String returns the order's name ("auto" for the zero value).
func (o ReadOrder) String() string {
	if o == "" {
		return string(ReadOrderAuto)
	}
	return string(o)
}

// Set parses s as a read order: auto, disk, inode or listing.
func (o *ReadOrder) Set(s string) error {
	switch v := ReadOrder(s); v {
	case ReadOrderAuto, ReadOrderDisk, ReadOrderInode, ReadOrderListing:
		*o = v
		return nil
	}
	return fmt.Errorf("must be auto, disk, inode or listing, not %q", s)
}

// Type names the value's kind for help text.
func (o *ReadOrder) Type() string { return "order" }

// ChooseReadOrder resolves o for a source at src and says why, for -v and
// --json: an order given explicitly is kept; auto becomes disk order on a
// rotational or USB disk (as ChooseJobs picks one stream there) and
// listing order on anything else.
func ChooseReadOrder(o ReadOrder, src string) (ReadOrder, string) {
	if o != "" && o != ReadOrderAuto {
		return o, "set by --order"
	}
	return readOrderFor(fileio.DeviceOf(src))
}

// readOrderFor is the auto rule for a source on dev.
func readOrderFor(dev fileio.Device) (ReadOrder, string) {
	if dev.USB || (dev.Rotational && !dev.Virtual) {
		return ReadOrderDisk, "source on " + dev.String() + ": files are read in the order their data lies on the disk, to avoid seeks"
	}
	return ReadOrderListing, "source on " + dev.String() + ": files are read in listing order, seeks cost little"
}

// readKey is what ordering needs to know of a pending source file.
type readKey struct {
	Phys  int64  // byte offset of the file's first data on its device (fileio PhysicalStart)
	Known bool   // Phys is known
	Ino   uint64 // inode number (0 when the platform has none)
	Index int64  // position in listing order, unique within a run
}

// compareRead orders two keys for order (disk or inode). In disk order,
// files with a known place come first, by place; a tie, or two files of
// unknown place (no data, data kept in the inode, not yet allocated, no
// FIEMAP), falls back to inode order. Inode order falls back to listing
// order, which decides every remaining tie, so the result is the same
// whatever order the window arrived in.
func compareRead(order ReadOrder, a, b readKey) int {
	if order == ReadOrderDisk {
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
	if order == ReadOrderDisk || order == ReadOrderInode {
		if c := cmp.Compare(a.Ino, b.Ino); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Index, b.Index)
}

// Window bounds of readWindow: a window holds at most this many files, or
// this much of the callers' own accounting of each file's pending
// metadata (names, stat, the open descriptor's bookkeeping), whichever
// comes first. 100,000 files cover most trees in one window; the bytes
// bound keeps a tree of very long names from holding more.
const (
	readWindowFiles = 100_000
	readWindowBytes = 256 << 20
)

// readWindow gathers pending source files, in listing order, into windows
// and hands each window back in read order: bounded memory, whatever the
// size of the tree, at the price of one sweep of the disk per window. In
// listing order it holds nothing: each file comes straight back.
type readWindow[T any] struct {
	order    ReadOrder // disk, inode or listing (resolved, never auto)
	maxFiles int
	maxBytes int64

	items []readItem[T]
	bytes int64
	out   []T
}

type readItem[T any] struct {
	key  readKey
	item T
}

// newReadWindow returns a window for order (auto counts as listing: the
// caller resolves it first, see ChooseReadOrder) with the given bounds;
// bounds of 0 or less take the defaults.
func newReadWindow[T any](order ReadOrder, maxFiles int, maxBytes int64) *readWindow[T] {
	if order != ReadOrderDisk && order != ReadOrderInode {
		order = ReadOrderListing
	}
	if maxFiles <= 0 {
		maxFiles = readWindowFiles
	}
	if maxBytes <= 0 {
		maxBytes = readWindowBytes
	}
	return &readWindow[T]{order: order, maxFiles: maxFiles, maxBytes: maxBytes}
}

// Add takes the next file in listing order, with its key and the bytes of
// metadata it holds while pending. When that fills the window (or in
// listing order, at once) it returns the files to read now, in read
// order; otherwise nil. The slice is valid until the next call.
func (w *readWindow[T]) Add(item T, key readKey, metaBytes int64) []T {
	if w.order == ReadOrderListing {
		w.out = append(w.out[:0], item)
		return w.out
	}
	w.items = append(w.items, readItem[T]{key: key, item: item})
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
func (w *readWindow[T]) Flush() []T {
	if len(w.items) == 0 {
		return nil
	}
	slices.SortFunc(w.items, func(a, b readItem[T]) int { return compareRead(w.order, a.key, b.key) })
	w.out = w.out[:0]
	for i := range w.items {
		w.out = append(w.out, w.items[i].item)
		var zero readItem[T]
		w.items[i] = zero // let go of the item
	}
	w.items = w.items[:0]
	w.bytes = 0
	return w.out
}

// Pending returns how many files wait in the current window.
func (w *readWindow[T]) Pending() int { return len(w.items) }
