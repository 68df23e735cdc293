package dedup

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/verify"
)

func TestUniqueSizeNeedsNoHash(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	if ix.Begin(10, nil) {
		t.Fatal("first file of a size reported a collision")
	}
	if !ix.Begin(10, nil) {
		t.Fatal("second file of the same size reported no collision")
	}
	if ix.Begin(11, nil) {
		t.Fatal("a new size reported a collision")
	}
}

func TestFindMatchesDigestAndMeta(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	a, b := verify.Bytes([]byte("a")), verify.Bytes([]byte("b"))
	m1 := Meta{Mode: 0o644, Mtime: 1}
	m2 := Meta{Mode: 0o600, Mtime: 1}
	ix.Begin(1, nil)
	ta := ix.Register("x", 1, a, m1)
	if got, mine := ix.Find("y", 1, a, m2, no); got != ta || mine {
		t.Fatalf("clone lookup ignoring metadata: got %v (mine %v)", got, mine)
	}
	got, mine := ix.Find("y", 1, a, m2, yes)
	if !mine || got == ta {
		t.Fatalf("hard-link lookup matched a file with other metadata: %v", got)
	}
	ix.Drop(got) // y was not written after all
	if got, mine := ix.Find("z", 1, b, m1, no); !mine || got.Rel != "z" {
		t.Fatalf("another digest matched: %v", got)
	}
	if got, _ := ix.Find("w", 1, a, m1, yes); got != ta {
		t.Fatalf("same digest and metadata: got %v", got)
	}
	if got, mine := ix.Find("v", 1, a, m2, yes); !mine || got.Rel != "v" {
		t.Fatalf("the dropped target y was found again: %v", got)
	}
}

// TestFindDoesNotWaitForHashedWriters: a file Find made a target of has a
// known digest, so later files of its size need not wait for its write: a
// same-digest file finds it, another goes on. Only a writer from Begin,
// whose digest comes with its copy, is waited for.
func TestFindDoesNotWaitForHashedWriters(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	a, b := verify.Bytes([]byte("a")), verify.Bytes([]byte("b"))
	ix.Begin(1, nil)
	ix.Register("first", 1, verify.Bytes([]byte("0")), Meta{})
	ta, mine := ix.Find("a1", 1, a, Meta{}, no) // being written, not yet registered
	if !mine {
		t.Fatal("a new digest found a target")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if got, _ := ix.Find("a2", 1, a, Meta{}, no); got != ta {
			t.Errorf("a same-digest file found %v, want the one being written", got)
		}
		if _, mine := ix.Find("b1", 1, b, Meta{}, no); !mine {
			t.Error("another digest found a target")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Find waited for a writer whose digest was known")
	}
}

// TestConcurrentDuplicatesWrittenOnce runs many workers over files that
// all share one size and come in a few distinct contents: each distinct
// content must be written exactly once, whatever the interleaving.
func TestConcurrentDuplicatesWrittenOnce(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	sums := []verify.Sum{verify.Bytes([]byte("1")), verify.Bytes([]byte("2")), verify.Bytes([]byte("3"))}
	var writes [3]atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			k := i % 3
			if ix.Begin(7, nil) {
				if _, mine := ix.Find("f", 7, sums[k], Meta{}, no); !mine {
					return // shared with what another file wrote
				}
				writes[k].Add(1)
				return
			}
			writes[k].Add(1)
			ix.Register("f", 7, sums[k], Meta{})
		}(i)
	}
	wg.Wait()
	for k := range writes {
		if n := writes[k].Load(); n != 1 {
			t.Errorf("content %d written %d times, want once", k, n)
		}
	}
}

func TestAbandonWakesWaiters(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	ix.Begin(5, nil)
	done := make(chan *Target)
	go func() {
		got, mine := ix.Find("x", 5, verify.Sum{}, Meta{}, no)
		if !mine {
			got = nil
		}
		done <- got
	}()
	ix.Abandon(5)
	if got := <-done; got == nil || got.Rel != "x" {
		t.Fatalf("found %v after the only writer gave up, want a new target", got)
	}
}

func TestTargetInPlace(t *testing.T) {
	t.Parallel()
	tg := &Target{}
	if _, ok := tg.InPlace(); ok {
		t.Fatal("a target is in place before Done")
	}
	tg.Done(true, Placed{Ino: 3})
	if p, ok := tg.InPlace(); !ok || p.Ino != 3 {
		t.Fatalf("InPlace = %v, %v", p, ok)
	}
}

// TestBeginPrunesGoneTargets: a target the destination held before the run
// that gone reports missing is dropped, once looked at, so a file of its
// size is not hashed for it; one still there keeps colliding, and gone is
// asked about each target once.
func TestBeginPrunesGoneTargets(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	sum := verify.Bytes([]byte("x"))
	deleted := &Target{Rel: "deleted", Sum: sum, Size: 100, External: true}
	kept := &Target{Rel: "kept", Sum: sum, Size: 200, External: true}
	ix.Add(deleted)
	ix.Add(kept)
	asked := map[string]int{}
	gone := func(t *Target) bool {
		asked[t.Rel]++
		return t.Rel == "deleted"
	}
	if ix.Begin(100, gone) {
		t.Error("a size whose only target is gone reported a collision")
	}
	if !ix.Begin(100, gone) {
		t.Error("the second file of that size (the first being written) reported no collision")
	}
	for i := 0; i < 2; i++ {
		if !ix.Begin(200, gone) {
			t.Error("a size with a target still in place reported no collision")
		}
	}
	if asked["deleted"] != 1 || asked["kept"] != 1 {
		t.Errorf("gone asked %v; want each target once", asked)
	}
}

func yes() bool { return true }
func no() bool  { return false }
