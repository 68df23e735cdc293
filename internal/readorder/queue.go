package readorder

import (
	"context"
	"sync"
)

// Queue is a read window with its dispatch: it takes the files a walk
// would send to the readers, in listing order, holds them in a Window and
// hands each full window on in read order, in chunks of neighbours that
// Same says may go together, asking for each file ahead (Ask) within a
// budget of bytes (AheadBytes). It has its own lock: Add and Flush may be
// called from several goroutines, and Copied from the readers.
//
// T is a pending file; D is what tells the source directories of the
// files held apart (the window is flushed early when it holds files of
// MaxDirs directories, so that the descriptors it keeps open stay within
// the process's limit).
type Queue[T any, D comparable] struct {
	cfg QueueConfig[T]

	mu   sync.Mutex
	win  *Window[T]
	dirs map[D]int // source directories of the files held, and how many each
	next int64     // listing position of the next file

	// What Ask asked for that the readers have not taken yet (bytes), and
	// its signal.
	aheadMu   sync.Mutex
	aheadCond *sync.Cond
	ahead     int64
	large     int // large files sent and not yet read
}

// QueueConfig is the whole input of a Queue.
type QueueConfig[T any] struct {
	Order      Order // disk or inode (listing sends each file at once)
	MaxFiles   int   // the window's bound in files (0: WindowFiles)
	MaxDirs    int   // the most source directories the window holds files of
	ChunkFiles int   // the most files of a chunk
	ChunkBytes int64 // a chunk takes no file once it holds this many bytes
	AheadBytes int64 // the most bytes asked for ahead of the readers

	// Ctx stops the wait for room: a run that stops sends what is left
	// without asking for it.
	Ctx context.Context
	// Size is the bytes of a file's data.
	Size func(*T) int64
	// Same reports whether b may follow a in one chunk (the same source
	// directory, destination directory and the like).
	Same func(a, b *T) bool
	// Ask asks for a file ahead of its reader: it returns the bytes asked
	// for (given back with Copied once the file is read), -1 for a large
	// file that holds back what comes after it until it is read, or 0 when
	// nothing was asked.
	Ask func(*T) int64
	// Send hands a chunk on, in read order. It is called with the Queue's
	// lock held; the slice is valid only during the call.
	Send func([]T)
}

// NewQueue returns an empty Queue for cfg.
func NewQueue[T any, D comparable](cfg QueueConfig[T]) *Queue[T, D] {
	q := &Queue[T, D]{
		cfg:  cfg,
		win:  NewWindow[T](cfg.Order, cfg.MaxFiles, 0),
		dirs: map[D]int{},
	}
	q.aheadCond = sync.NewCond(&q.aheadMu)
	return q
}

// Add takes the next file in listing order, from the source directory
// dir, with its key (Index is set here) and the bytes of metadata it
// holds while pending. A window that fills is sent on before Add returns.
func (q *Queue[T, D]) Add(item T, dir D, key Key, metaBytes int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key.Index = q.next
	q.next++
	q.dirs[dir]++
	full := q.win.Add(item, key, metaBytes)
	if full == nil && len(q.dirs) >= q.cfg.MaxDirs {
		full = q.win.Flush()
	}
	if full != nil {
		q.dispatch(full)
	}
}

// Flush sends what the window holds: at the end of the walk.
func (q *Queue[T, D]) Flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if items := q.win.Flush(); items != nil {
		q.dispatch(items)
	}
}

// dispatch sends a sorted window on, in chunks of consecutive files that
// Same keeps together, each chunk at most ChunkFiles files or ChunkBytes
// bytes. Call with q.mu held.
//
// Each file is asked for (Ask: opened, and the kernel asked to start
// reading it) as its chunk is made, up to AheadBytes ahead of the
// readers: in disk order the neighbours on the disk are often in
// different directories, so chunks are short, and a reader's own
// look-ahead, which stops at the end of its chunk, would leave the disk
// idle between chunks. The requests go out in read order, so that the
// disk sees one sweep. A large file is not asked for (the kernel would
// read only its first read-ahead window, and the rest when the reader
// reads it, after whatever was asked for meanwhile: a seek back and forth
// per large file, 2x the seeks of the bimodal benchmark): with one copy
// stream, nothing after it is asked for until it is read. When there is
// no room, the chunk is sent as it is and the next waits for the readers.
func (q *Queue[T, D]) dispatch(items []T) {
	clear(q.dirs)
	for len(items) > 0 {
		first := &items[0]
		q.waitRoom(q.cfg.Size(first))
		n, bytes := 0, int64(0)
		for n < len(items) && n < q.cfg.ChunkFiles && bytes < q.cfg.ChunkBytes {
			it := &items[n]
			size := q.cfg.Size(it)
			if n > 0 && (!q.cfg.Same(first, it) || !q.room(size)) {
				break
			}
			q.ask(it)
			bytes += size
			n++
		}
		q.cfg.Send(items[:n])
		items = items[n:]
	}
}

// ask has Ask ask for it, and counts what it asked for.
func (q *Queue[T, D]) ask(it *T) {
	asked := q.cfg.Ask(it)
	if asked == 0 {
		return
	}
	q.aheadMu.Lock()
	if asked < 0 {
		q.large++
	} else {
		q.ahead += asked
	}
	q.aheadMu.Unlock()
}

// room reports whether a file of size bytes may be asked for now: when no
// large file waits to be read, and it fits in AheadBytes beside what is
// asked for already, or nothing is.
func (q *Queue[T, D]) room(size int64) bool {
	q.aheadMu.Lock()
	defer q.aheadMu.Unlock()
	return q.roomLocked(size)
}

func (q *Queue[T, D]) roomLocked(size int64) bool {
	return q.large == 0 && (q.ahead == 0 || q.ahead+size <= q.cfg.AheadBytes)
}

// waitRoom waits until a file of size bytes may be asked for, or Ctx is
// done. What was asked for is in chunks sent already, which the readers
// take.
func (q *Queue[T, D]) waitRoom(size int64) {
	if q.room(size) {
		return
	}
	ctx := q.cfg.Ctx
	stop := context.AfterFunc(ctx, func() {
		q.aheadMu.Lock()
		q.aheadCond.Broadcast()
		q.aheadMu.Unlock()
	})
	defer stop()
	q.aheadMu.Lock()
	for !q.roomLocked(size) && ctx.Err() == nil {
		q.aheadCond.Wait()
	}
	q.aheadMu.Unlock()
}

// Copied gives back the room of a file asked for ahead (what Ask
// returned for it: bytes, or -1 for a large file), once it is read.
func (q *Queue[T, D]) Copied(asked int64) {
	q.aheadMu.Lock()
	if asked < 0 {
		q.large--
	} else {
		q.ahead -= asked
	}
	q.aheadCond.Broadcast()
	q.aheadMu.Unlock()
}

// Dirs is a walk's queue of directories waiting to be listed, with a
// count of those taken and not yet done: last in, first out in listing
// order, which keeps the walk depth-first and the queue short, and by
// inode number in disk and inode order (DirQueue). Pop blocks until a
// directory waits or every one is done. Its lock is its own; several
// listers share it.
type Dirs[T any] struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []T
	byIno   *DirQueue[T] // in disk and inode order: instead of items
	pending int
}

// NewDirs returns an empty queue of directories; byInode gives them back
// by inode number.
func NewDirs[T any](byInode bool) *Dirs[T] {
	q := &Dirs[T]{}
	q.cond = sync.NewCond(&q.mu)
	if byInode {
		q.byIno = &DirQueue[T]{}
	}
	return q
}

// Push adds w, a directory of inode number ino, to be listed.
func (q *Dirs[T]) Push(w T, ino uint64) {
	q.mu.Lock()
	if q.byIno != nil {
		q.byIno.Push(w, ino)
	} else {
		q.items = append(q.items, w)
	}
	q.pending++
	q.mu.Unlock()
	q.cond.Signal()
}

// Pop blocks until a directory is available; ok is false when all are
// done. Each directory popped is marked Done once listed.
func (q *Dirs[T]) Pop() (w T, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.len() == 0 && q.pending > 0 {
		q.cond.Wait()
	}
	if q.len() == 0 {
		return w, false
	}
	if q.byIno != nil {
		return q.byIno.Pop(), true
	}
	w = q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return w, true
}

func (q *Dirs[T]) len() int {
	if q.byIno != nil {
		return q.byIno.Len()
	}
	return len(q.items)
}

// Done marks a directory popped as listed (what it holds pushed).
func (q *Dirs[T]) Done() {
	q.mu.Lock()
	q.pending--
	if q.pending == 0 {
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

// Work lists the directories with n goroutines, each popping one and
// calling list for it (which pushes what it holds) until every one is
// done; it returns then.
func (q *Dirs[T]) Work(n int, list func(T)) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				w, ok := q.Pop()
				if !ok {
					return
				}
				list(w)
				q.Done()
			}
		}()
	}
	wg.Wait()
}

// Listers is how many directories a walk lists at once for a run of jobs
// copy workers reading in order o: one in disk and inode order, one sweep
// of the metadata in inode order; else jobs, at least two (listing
// overlaps copying even with one copy stream) and at most eight.
func Listers(o Order, jobs int) int {
	if o == Disk || o == Inode {
		return 1
	}
	return min(max(jobs, 2), 8)
}
