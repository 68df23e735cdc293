package copyengine

import (
	"context"
	"sync"
	"unsafe"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/readorder"
)

// In disk and inode order (see ReadOrder) the walk reads the source's
// metadata first and its data after, each in the order it lies on the
// disk:
//
//   - the walker lists one directory at a time, the directory of lowest
//     inode number first (dirQueue), and stats each directory's names in
//     inode order (the listing's d_ino), so that the inode tables are read
//     in one sweep;
//   - the regular files that need work are not sent to the copier as they
//     are listed but held in a window (readQueue, readorder.Window), with the
//     place of their first data (disk order: fileio PhysicalStart, asked
//     while the walk is among the file's metadata anyway), their inode
//     and their listing position;
//   - only when the window is full, or the walk is over, is it sorted and
//     handed to the copy workers in that order, in chunks of neighbours
//     that share a source directory and a destination directory, so that
//     a worker's look-ahead (prefetch) asks for files that lie side by
//     side on the disk.
//
// Everything after the read (the destination's writes, flushes,
// read-backs, renames, staged directories published when their last file
// is done) is unchanged: a file's staged directory counts it from the
// moment it is listed, so finishing out of order publishes nothing early.
// The window holds a reference to each directory its files are in; it is
// flushed early when it holds readorder.WindowDirs directories, so that the
// descriptors it keeps open stay within the process's limit.

// windowItem is a file waiting in the read window, with the references to
// its directories that its chunk will carry.
type windowItem struct {
	src, dst *handle
	stage    *stage
	en       entry
}

// readQueue is the walker's read window: it takes the files the walk
// would send to the copier and sends them in read order.
type readQueue struct {
	e       *engine
	order   ReadOrder // disk or inode
	mu      sync.Mutex
	win     *readorder.Window[windowItem]
	dirs    map[*handle]int // source directories of the files held, and how many each
	maxDirs int
	next    int64 // listing position of the next file

	// What dispatch asked the kernel for that the workers have not taken
	// yet (bytes), and its signal.
	aheadMu   sync.Mutex
	aheadCond *sync.Cond
	ahead     int64
	large     int // large files sent and not yet copied
}

func newReadQueue(e *engine, order ReadOrder) *readQueue {
	q := &readQueue{
		e:       e,
		order:   order,
		win:     readorder.NewWindow[windowItem](order, e.opt.readWindowFiles, 0),
		dirs:    map[*handle]int{},
		maxDirs: readorder.WindowDirs(fileio.OpenLimit()),
	}
	q.aheadCond = sync.NewCond(&q.aheadMu)
	return q
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
		key := readorder.Key{Ino: en.st.Ino}
		if q.order == ReadOrderDisk && en.st.Size > 0 {
			key.Phys, key.Known = fileio.PhysicalStart(src.d, en.name)
		}
		it := windowItem{src: src.retain(), stage: st, en: en}
		if dst != nil {
			it.dst = dst.retain()
		}
		meta := int64(unsafe.Sizeof(it)) + int64(len(en.name)+len(en.dstName)+len(en.tmp)+len(en.srcKey))
		q.mu.Lock()
		key.Index = q.next
		q.next++
		q.dirs[src]++
		full := q.win.Add(it, key, meta)
		if full == nil && len(q.dirs) >= q.maxDirs {
			full = q.win.Flush()
		}
		if full != nil {
			q.dispatch(full)
		}
		q.mu.Unlock()
	}
	return rest
}

// flush sends what the window holds: at the end of the walk.
func (q *readQueue) flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if items := q.win.Flush(); items != nil {
		q.dispatch(items)
	}
}

// dispatch sends a sorted window to the workers, in chunks of consecutive
// files of one source directory, destination directory and stage, each
// chunk at most chunkFiles files or chunkBytes bytes. Call with q.mu
// held.
//
// Each small file is opened as its chunk is made and the kernel asked to
// start reading it (POSIX_FADV_WILLNEED), up to readAheadBytes ahead of
// the workers: in disk order the neighbours on the disk are often in
// different directories, so chunks are short, and a worker's own
// look-ahead, which stops at the end of its chunk, would leave the disk
// idle between chunks. The requests go out in read order, so that the
// disk sees one sweep. A large file is not asked for (the kernel would
// read only its first read-ahead window, and the rest when the worker
// reads it, after whatever was asked for meanwhile: a seek back and
// forth per large file, 2x the seeks of the bimodal benchmark): with one
// copy stream, nothing after it is asked for until it is copied. When there is no
// room, the chunk is sent as it is and the next waits for the workers.
func (q *readQueue) dispatch(items []windowItem) {
	e := q.e
	clear(q.dirs)
	for len(items) > 0 {
		first := items[0]
		q.waitRoom(first.en.st.Size)
		n, bytes := 0, int64(0)
		for n < len(items) && n < chunkFiles && bytes < chunkBytes {
			it := &items[n]
			if n > 0 && (it.src != first.src || it.dst != first.dst || it.stage != first.stage || !q.room(it.en.st.Size)) {
				break
			}
			q.ask(it.src.d, &it.en)
			bytes += it.en.st.Size
			n++
		}
		c := &chunk{src: first.src, dst: first.dst, stage: first.stage, entries: make([]entry, n)}
		for i := range n {
			c.entries[i] = items[i].en
			if i > 0 { // the chunk carries the first item's references
				items[i].src.release()
				items[i].dst.release()
			}
		}
		items = items[n:]
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
}

// readAheadBytes is how much of the files the workers have not taken yet
// the read window asks the kernel for (see dispatch).
const readAheadBytes = 64 << 20

// room reports whether a file of size bytes may be asked for now: when no
// large file waits to be copied, and it fits in readAheadBytes beside
// what is asked for already, or nothing is.
func (q *readQueue) room(size int64) bool {
	q.aheadMu.Lock()
	defer q.aheadMu.Unlock()
	return q.roomLocked(size)
}

func (q *readQueue) roomLocked(size int64) bool {
	return q.large == 0 && (q.ahead == 0 || q.ahead+size <= readAheadBytes)
}

// waitRoom waits until a file of size bytes may be asked for, or the run
// stops. What was asked for is in chunks sent already, which the workers
// take.
func (q *readQueue) waitRoom(size int64) {
	e := q.e
	if !fileio.CanPrefetch {
		return
	}
	stop := context.AfterFunc(e.ctx, func() {
		q.aheadMu.Lock()
		q.aheadCond.Broadcast()
		q.aheadMu.Unlock()
	})
	defer stop()
	q.aheadMu.Lock()
	for !q.roomLocked(size) && e.ctx.Err() == nil {
		q.aheadCond.Wait()
	}
	q.aheadMu.Unlock()
}

// ask opens en, a file of sd, and asks the kernel to start reading it,
// unless it reads no data here (see copier.openAhead) or no descriptor is
// to spare; a large file is noted instead, to hold back what comes after
// it until it is copied.
func (q *readQueue) ask(sd *fileio.Dir, en *entry) {
	e := q.e
	if !fileio.CanPrefetch || en.src != nil || !en.st.IsRegular() || en.check || en.st.Size == 0 {
		return
	}
	if en.st.Size > prefetchMax {
		if e.sum.Jobs > 1 {
			return // several streams read side by side anyway: no one waits
		}
		en.asked = -1
		q.aheadMu.Lock()
		q.large++
		q.aheadMu.Unlock()
		return
	}
	if e.copier.config().ReadsNothing(&en.st) {
		return // a clone that needs no digest reads no data
	}
	if e.ahead.n.Load() >= e.ahead.max/2 || !e.ahead.take() {
		return // the other half is the workers' and the read-back's
	}
	f, err := sd.Open(en.name, e.opt.Dereference)
	if err != nil {
		e.ahead.give()
		return // the copy opens it again and reports what it finds
	}
	n := en.st.Size
	f.Prefetch(0, n)
	en.src, en.asked = f, n
	q.aheadMu.Lock()
	q.ahead += n
	q.aheadMu.Unlock()
}

// copied gives back the room of a file asked for ahead (asked bytes, or
// -1 for a large file), once a worker is done with it.
func (q *readQueue) copied(asked int64) {
	q.aheadMu.Lock()
	if asked < 0 {
		q.large--
	} else {
		q.ahead -= asked
	}
	q.aheadCond.Broadcast()
	q.aheadMu.Unlock()
}

// readQueueChunks is how many chunks wait for the workers in disk and
// inode order (see dispatch); listing order keeps two per worker.
const readQueueChunks = 64

// dirQueue is the walk's queue of directories in disk and inode order
// (readorder.DirQueue): the directory of lowest inode number first.
type dirQueue struct{ q readorder.DirQueue[dirWork] }

func (q *dirQueue) Len() int       { return q.q.Len() }
func (q *dirQueue) push(w dirWork) { q.q.Push(w, w.ino) }
func (q *dirQueue) pop() dirWork   { return q.q.Pop() }

// preStat stats the names of the directory in inode order, before
// classify goes through them in listing order: the inode tables are read
// in one direction instead of by name.
func (l *dirList) preStat() {
	e := l.wk.e
	order := readorder.StatOrder(l.names, func(i int) bool {
		return l.excluded[i] || l.nameErrs[i] != nil || l.lost[i] != ""
	})
	l.stats = make([]preStat, len(l.names))
	for _, i := range order {
		if e.ctx.Err() != nil {
			return
		}
		ps := &l.stats[i]
		if e.opt.Dereference {
			ps.st, ps.err = l.sd.StatFollow(l.names[i].Name)
		} else {
			ps.st, ps.err = l.sd.Lstat(l.names[i].Name)
		}
		ps.done = true
	}
}

// preStat is a name's stat taken ahead of classify (see dirList.preStat).
type preStat struct {
	st   fileio.Stat
	err  error
	done bool
}
