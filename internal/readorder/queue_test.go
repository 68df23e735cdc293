package readorder

import (
	"context"
	"slices"
	"sync"
	"testing"
)

type qItem struct {
	name  string
	dir   int
	size  int64
	asked int64
}

func newTestQueue(t *testing.T, maxFiles int, sent *[][]string, ask func(*qItem) int64) (*Queue[qItem, int], chan struct{}) {
	t.Helper()
	signal := make(chan struct{}, 100)
	return NewQueue[qItem, int](QueueConfig[qItem]{
		Order: Inode, MaxFiles: maxFiles, MaxDirs: 100, ChunkFiles: 3, ChunkBytes: 1 << 20, AheadBytes: 100,
		Ctx:  context.Background(),
		Size: func(it *qItem) int64 { return it.size },
		Same: func(a, b *qItem) bool { return a.dir == b.dir },
		Ask:  ask,
		Send: func(items []qItem) {
			var names []string
			for _, it := range items {
				names = append(names, it.name)
			}
			*sent = append(*sent, names)
			signal <- struct{}{}
		},
	}), signal
}

// TestQueueChunks: a window is sent in inode order, in chunks of at most
// ChunkFiles files of one directory.
func TestQueueChunks(t *testing.T) {
	var sent [][]string
	q, _ := newTestQueue(t, 100, &sent, func(*qItem) int64 { return 0 })
	for i, f := range []struct {
		name string
		dir  int
		ino  uint64
	}{{"e", 1, 5}, {"a", 1, 1}, {"d", 2, 4}, {"b", 1, 2}, {"c", 1, 3}, {"f", 1, 6}, {"g", 1, 7}} {
		q.Add(qItem{name: f.name, dir: f.dir}, f.dir, Key{Ino: f.ino, Index: int64(100 - i)}, 1)
	}
	if len(sent) != 0 {
		t.Fatalf("sent before the window filled: %v", sent)
	}
	q.Flush()
	want := [][]string{{"a", "b", "c"}, {"d"}, {"e", "f", "g"}}
	if !slices.EqualFunc(sent, want, slices.Equal[[]string]) {
		t.Fatalf("chunks %v, want %v", sent, want)
	}
	sent = nil
	q.Flush()
	if len(sent) != 0 {
		t.Fatalf("an empty window sent %v", sent)
	}
}

// TestQueueAhead: a chunk takes no file past the read-ahead budget, the
// next waits for room, and a large file holds back what follows it until
// it is read.
func TestQueueAhead(t *testing.T) {
	var sent [][]string
	q, signal := newTestQueue(t, 100, &sent, func(it *qItem) int64 {
		if it.size > 100 {
			return -1
		}
		return it.size
	})
	for i, f := range []struct {
		name string
		size int64
	}{{"a", 60}, {"b", 60}, {"c", 200}, {"d", 10}} {
		q.Add(qItem{name: f.name, size: f.size}, 0, Key{Ino: uint64(i)}, 1)
	}
	done := make(chan struct{})
	go func() {
		q.Flush()
		close(done)
	}()
	<-signal // a is asked for: b has no room beside it
	q.Copied(60)
	<-signal // b
	q.Copied(60)
	<-signal // c, large: d waits for it
	select {
	case <-done:
		t.Fatalf("d was sent before the large file was read: %v", sent)
	default:
	}
	q.Copied(-1)
	<-done
	want := [][]string{{"a"}, {"b"}, {"c"}, {"d"}}
	if !slices.EqualFunc(sent, want, slices.Equal[[]string]) {
		t.Fatalf("chunks %v, want %v", sent, want)
	}
	if q.large != 0 || q.ahead != 10 {
		t.Fatalf("large %d, ahead %d; want 0 and 10", q.large, q.ahead)
	}
}

// TestQueueStop: a run that stops sends what is left without waiting for
// room.
func TestQueueStop(t *testing.T) {
	var sent [][]string
	ctx, cancel := context.WithCancel(context.Background())
	q, signal := newTestQueue(t, 100, &sent, func(it *qItem) int64 { return it.size })
	q.cfg.Ctx = ctx
	q.Add(qItem{name: "a", size: 100}, 0, Key{Ino: 1}, 1)
	q.Add(qItem{name: "b", size: 100}, 0, Key{Ino: 2}, 1)
	done := make(chan struct{})
	go func() {
		q.Flush()
		close(done)
	}()
	<-signal
	cancel()
	<-done
	if len(sent) != 2 {
		t.Fatalf("chunks %v, want two", sent)
	}
}

// TestDirs: directories come back last in first out, or by inode number;
// Pop says when every one is done.
func TestDirs(t *testing.T) {
	for _, byIno := range []bool{false, true} {
		q := NewDirs[string](byIno)
		q.Push("root", 0)
		w, ok := q.Pop()
		if !ok || w != "root" {
			t.Fatalf("Pop() = %q, %v", w, ok)
		}
		q.Push("c", 3)
		q.Push("a", 1)
		q.Push("b", 2)
		q.Done()
		var got []string
		for {
			w, ok := q.Pop()
			if !ok {
				break
			}
			got = append(got, w)
			q.Done()
		}
		want := []string{"b", "a", "c"}
		if byIno {
			want = []string{"a", "b", "c"}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("byInode %v: popped %v, want %v", byIno, got, want)
		}
	}
}

// TestDirsWork: every directory pushed, at the start or while listing,
// is listed once, and Work returns when all are.
func TestDirsWork(t *testing.T) {
	q := NewDirs[int](false)
	q.Push(0, 0)
	var mu sync.Mutex
	var seen []int
	q.Work(4, func(w int) {
		mu.Lock()
		seen = append(seen, w)
		mu.Unlock()
		if w < 50 {
			q.Push(2*w+1, 0)
			q.Push(2*w+2, 0)
		}
	})
	slices.Sort(seen)
	for i, w := range seen {
		if w != i {
			t.Fatalf("listed %v", seen)
		}
	}
	if len(seen) != 101 {
		t.Fatalf("listed %d directories, want 101", len(seen))
	}
}

func TestListers(t *testing.T) {
	for _, c := range []struct {
		o    Order
		jobs int
		want int
	}{{Listing, 1, 2}, {Listing, 4, 4}, {Listing, 32, 8}, {Disk, 8, 1}, {Inode, 8, 1}} {
		if got := Listers(c.o, c.jobs); got != c.want {
			t.Fatalf("Listers(%s, %d) = %d, want %d", c.o, c.jobs, got, c.want)
		}
	}
}
