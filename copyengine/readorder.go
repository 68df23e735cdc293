package copyengine

import (
	"unsafe"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/readorder"
)

// ReadOrder says in which order a run reads its source files
// (readorder.Order, which tells each): on a disk that seeks, reading
// files in the order their data lies on the disk turns a seek per file
// into one sweep. It is a pflag.Value.
type ReadOrder = readorder.Order

// The read orders (readorder.Auto and the others).
const (
	ReadOrderAuto    = readorder.Auto    // disk order on a rotational or USB disk, listing order elsewhere
	ReadOrderDisk    = readorder.Disk    // by the place of each file's first data, then inode, then listing
	ReadOrderInode   = readorder.Inode   // by inode number, then listing
	ReadOrderListing = readorder.Listing // in the order the walk lists them
)

// ChooseReadOrder resolves o for a source at src and says why, for -v and
// --json (readorder.Choose): an order given explicitly is kept; auto
// becomes disk order on a rotational or USB disk and listing order on
// anything else.
func ChooseReadOrder(o ReadOrder, src string) (ReadOrder, string) {
	return readorder.Choose(o, src)
}

// In disk and inode order (see ReadOrder) the walk reads the source's
// metadata first and its data after, each in the order it lies on the
// disk (internal/readorder's package comment says how). A file's staged
// directory counts it from the moment it is listed, so finishing out of
// order publishes nothing early.

// windowItem is a file waiting in the read window, with the references to
// its directories that its chunk will carry.
type windowItem struct {
	src, dst *handle
	stage    *stage
	en       entry
}

// readQueue is the walker's read window (readorder.Queue): it takes the
// files the walk would send to the copier and sends them in read order,
// each chunk to the copy workers, each small file opened ahead and the
// kernel asked to start reading it (POSIX_FADV_WILLNEED).
type readQueue struct {
	e     *engine
	order ReadOrder // disk or inode
	q     *readorder.Queue[windowItem, *handle]
}

func newReadQueue(e *engine, order ReadOrder) *readQueue {
	rq := &readQueue{e: e, order: order}
	rq.q = readorder.NewQueue[windowItem, *handle](readorder.QueueConfig[windowItem]{
		Order:      order,
		MaxFiles:   e.opt.readWindowFiles,
		MaxDirs:    readorder.WindowDirs(fileio.OpenLimit()),
		ChunkFiles: chunkFiles,
		ChunkBytes: chunkBytes,
		AheadBytes: readAheadBytes,
		Ctx:        e.ctx,
		Size:       func(it *windowItem) int64 { return it.en.st.Size },
		Same: func(a, b *windowItem) bool {
			return a.src == b.src && a.dst == b.dst && a.stage == b.stage
		},
		Ask:  rq.ask,
		Send: rq.send,
	})
	return rq
}

// ordered reports whether the run reads in disk or inode order.
func (wk *walker) ordered() bool { return wk.reads != nil }

// hold takes the regular files of entries (listed in src, to be written
// in dst) into the window and returns the other entries, to be sent at
// once: symlinks, special files and the like read no data.
func (q *readQueue) hold(src, dst *handle, st *stage, entries []entry) []entry {
	rest := entries[:0]
	for i := range entries {
		en := entries[i]
		if !en.st.IsRegular() {
			rest = append(rest, en)
			continue
		}
		key := readorder.KeyOf(q.order, src.d, en.name, &en.st)
		it := windowItem{src: src.retain(), stage: st, en: en}
		if dst != nil {
			it.dst = dst.retain()
		}
		meta := int64(unsafe.Sizeof(it)) + int64(len(en.name)+len(en.dstName)+len(en.tmp)+len(en.srcKey))
		q.q.Add(it, src, key, meta)
	}
	return rest
}

// send hands a chunk of the window, in read order, to the workers; the
// chunk carries the first item's references to its directories.
func (q *readQueue) send(items []windowItem) {
	e := q.e
	first := items[0]
	c := &chunk{src: first.src, dst: first.dst, stage: first.stage, entries: make([]entry, len(items))}
	for i := range items {
		c.entries[i] = items[i].en
		if i > 0 {
			items[i].src.release()
			items[i].dst.release()
		}
	}
	select {
	case e.copier.in <- c:
	case <-e.ctx.Done():
		for i := range c.entries {
			e.copier.closeSrc(&c.entries[i])
		}
		c.src.release()
		c.dst.release()
	}
}

// readAheadBytes is how much of the files the workers have not taken yet
// the read window asks the kernel for (readorder.Queue's dispatch).
const readAheadBytes = 64 << 20

// ask opens it, a file of its source directory, and asks the kernel to
// start reading it, unless it reads no data here (see copier.openAhead) or
// no descriptor is to spare; a large file is noted instead (-1), to hold
// back what comes after it until it is copied. It returns what the window
// counts as asked for (see readorder.QueueConfig.Ask).
func (q *readQueue) ask(it *windowItem) int64 {
	e, en := q.e, &it.en
	if !fileio.CanPrefetch || en.src != nil || !en.st.IsRegular() || en.check || en.st.Size == 0 {
		return 0
	}
	if en.st.Size > prefetchMax {
		if e.sum.Jobs > 1 {
			return 0 // several streams read side by side anyway: no one waits
		}
		en.asked = -1
		return -1
	}
	if e.copier.config().ReadsNothing(&en.st) {
		return 0 // a clone that needs no digest reads no data
	}
	if e.ahead.n.Load() >= e.ahead.max/2 || !e.ahead.take() {
		return 0 // the other half is the workers' and the read-back's
	}
	f, err := it.src.d.Open(en.name, e.opt.Dereference)
	if err != nil {
		e.ahead.give()
		return 0 // the copy opens it again and reports what it finds
	}
	n := en.st.Size
	f.Prefetch(0, n)
	en.src, en.asked = f, n
	return n
}

// copied gives back the room of a file asked for ahead (asked bytes, or
// -1 for a large file), once a worker is done with it.
func (q *readQueue) copied(asked int64) { q.q.Copied(asked) }

// readQueueChunks is how many chunks wait for the workers in disk and
// inode order (see dispatch); listing order keeps two per worker.
const readQueueChunks = 64
