//go:build fcfault && linux

package copyengine_test

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// shuffledTree writes files in two directories on a fresh ext4, in an
// order unlike their names', each flushed before the next is written, so
// that where each file's data lies on the disk follows the order they
// were written in, not their names. It returns the source directory and
// the files' relative paths in listing order (directory by directory in
// the order the walk lists them: by inode, names sorted).
func shuffledTree(t *testing.T) (string, []string) {
	t.Helper()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 256 << 20})
	src := fs.Path("src")
	var rels []string
	for _, d := range []string{"d", "e"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			rels = append(rels, fmt.Sprintf("%s/f%03d", d, i))
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	order := slices.Clone(rels)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for i, rel := range order {
		data := pattern(int64(i), 4096+r.IntN(60000))
		f, err := os.Create(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil { // allocated now, in this order
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The walk lists directories by inode number, the names of each in
	// order.
	if inodeOf(t, filepath.Join(src, "e")) < inodeOf(t, filepath.Join(src, "d")) {
		rels = append(rels[40:], rels[:40]...)
	}
	return src, rels
}

// placeOf returns the place of rel's first data (FIEMAP) and its inode.
func placeOf(t *testing.T, src, rel string) (int64, uint64) {
	t.Helper()
	d, err := fileio.OpenDir(filepath.Join(src, filepath.Dir(rel)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	off, ok := fileio.PhysicalStart(d, filepath.Base(rel))
	if !ok {
		t.Fatalf("%s: no place on the disk after a flush", rel)
	}
	st, err := d.Lstat(filepath.Base(rel))
	if err != nil {
		t.Fatal(err)
	}
	return off, st.Ino
}

// readsOf runs a copy of src with opt and returns the source files in the
// order their data was first read.
func readsOf(t *testing.T, src string, rels []string, opt copyengine.Options) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	seen := map[string]bool{}
	var faults []*fileio.Fault
	for _, rel := range rels {
		faults = append(faults, &fileio.Fault{Op: fileio.OpRead, PathHas: "/src/" + rel, Then: func() {
			mu.Lock()
			if !seen[rel] {
				seen[rel] = true
				got = append(got, rel)
			}
			mu.Unlock()
		}})
	}
	opt.Sources = []string{src}
	opt.Dest = filepath.Join(scratchDir(t), "dst")
	opt.Jobs, opt.JobsReason = 1, "one stream"
	if _, err := runEngine(t, copyengine.WithFaults(opt, fileio.NewFaultSet(faults...))); err != nil {
		t.Fatal(err)
	}
	sameTree(t, src, opt.Dest)
	if len(got) != len(rels) {
		t.Fatalf("%d of %d source files read", len(got), len(rels))
	}
	return got
}

// TestReadOrderDisk: in disk order a run reads its source files in the
// order their data lies on the disk, not in the order of their names.
func TestReadOrderDisk(t *testing.T) {
	src, rels := shuffledTree(t)
	place := map[string]int64{}
	for _, rel := range rels {
		place[rel], _ = placeOf(t, src, rel)
	}
	want := slices.Clone(rels)
	slices.SortStableFunc(want, func(a, b string) int { return cmp.Compare(place[a], place[b]) })
	if slices.Equal(want, rels) {
		t.Fatal("the tree's files lie on the disk in listing order: the test would show nothing")
	}
	opt := copyengine.Options{ReadOrder: copyengine.ReadOrderDisk}
	copyengine.SetReadWindowFiles(&opt, 1000) // one window, whatever the suite's default
	got := readsOf(t, src, rels, opt)
	if !slices.Equal(got, want) {
		t.Fatalf("read order:\n got %v\nwant %v (by place on the disk)", got, want)
	}
}

// TestReadOrderInode: inode order reads by inode number.
func TestReadOrderInode(t *testing.T) {
	src, rels := shuffledTree(t)
	inode := map[string]uint64{}
	for _, rel := range rels {
		_, inode[rel] = placeOf(t, src, rel)
	}
	want := slices.Clone(rels)
	slices.SortStableFunc(want, func(a, b string) int { return cmp.Compare(inode[a], inode[b]) })
	opt := copyengine.Options{ReadOrder: copyengine.ReadOrderInode}
	copyengine.SetReadWindowFiles(&opt, 1000)
	got := readsOf(t, src, rels, opt)
	if !slices.Equal(got, want) {
		t.Fatalf("read order:\n got %v\nwant %v (by inode)", got, want)
	}
}

// TestReadOrderWindows: a window of at most 10 files takes the files in
// listing order, ten at a time, and each ten is read by place on the disk.
func TestReadOrderWindows(t *testing.T) {
	src, rels := shuffledTree(t)
	place := map[string]int64{}
	for _, rel := range rels {
		place[rel], _ = placeOf(t, src, rel)
	}
	var want []string
	for w := range slices.Chunk(rels, 10) {
		w = slices.Clone(w)
		slices.SortStableFunc(w, func(a, b string) int { return cmp.Compare(place[a], place[b]) })
		want = append(want, w...)
	}
	opt := copyengine.Options{ReadOrder: copyengine.ReadOrderDisk}
	copyengine.SetReadWindowFiles(&opt, 10)
	got := readsOf(t, src, rels, opt)
	if !slices.Equal(got, want) {
		t.Fatalf("read order with windows of 10:\n got %v\nwant %v", got, want)
	}
	// The whole tree in one window reads otherwise: these were several.
	all := slices.Clone(rels)
	slices.SortStableFunc(all, func(a, b string) int { return cmp.Compare(place[a], place[b]) })
	if slices.Equal(all, want) {
		t.Fatal("windows of 10 read as one window would: the test shows nothing")
	}
}

// TestReadOrderHoldsBackAfterLargeFile: in disk order with one stream, the
// small files ahead are asked for (POSIX_FADV_WILLNEED) in read order, but
// none that lies after a large file before that file is read: the kernel
// would read them in the middle of it, a seek away and back.
func TestReadOrderHoldsBackAfterLargeFile(t *testing.T) {
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 256 << 20})
	src := fs.Path("src")
	var rels []string
	for i := range 30 {
		rels = append(rels, fmt.Sprintf("f%03d", i))
	}
	// Written in name order, each flushed; f015 is 2 MiB.
	for i, rel := range rels {
		n := 128 << 10 // past ext4's small-file allocation, so that all are placed alike
		if i == 15 {
			n = 2 << 20
		}
		f, err := os.Create(filepath.Join(src, rel))
		if os.IsNotExist(err) {
			if err = os.MkdirAll(src, 0o755); err == nil {
				f, err = os.Create(filepath.Join(src, rel))
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(pattern(int64(i), n)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	place := map[string]int64{}
	for _, rel := range rels {
		place[rel], _ = placeOf(t, src, rel)
	}
	byPlace := slices.Clone(rels)
	slices.SortStableFunc(byPlace, func(a, b string) int { return cmp.Compare(place[a], place[b]) })
	at := slices.Index(byPlace, "f015")
	before, after := byPlace[:at], byPlace[at+1:]
	if len(before) < 3 || len(after) < 3 {
		t.Fatalf("the large file lies at %d of %d on the disk: the test would show little", at, len(byPlace))
	}
	var mu sync.Mutex
	asked := map[string]bool{}
	var askedAtLarge map[string]bool
	var faults []*fileio.Fault
	for _, rel := range rels {
		faults = append(faults, &fileio.Fault{Op: fileio.OpPrefetch, PathHas: "/src/" + rel, Then: func() {
			mu.Lock()
			asked[rel] = true
			mu.Unlock()
		}})
	}
	faults = append(faults, &fileio.Fault{Op: fileio.OpRead, PathHas: "/src/f015", Nth: 1, Then: func() {
		mu.Lock()
		askedAtLarge = maps.Clone(asked)
		mu.Unlock()
	}})
	opt := copyengine.Options{Sources: []string{src}, Dest: filepath.Join(scratchDir(t), "dst"), Jobs: 1, JobsReason: "one stream", ReadOrder: copyengine.ReadOrderDisk}
	if _, err := runEngine(t, copyengine.WithFaults(opt, fileio.NewFaultSet(faults...))); err != nil {
		t.Fatal(err)
	}
	sameTree(t, src, opt.Dest)
	if askedAtLarge == nil {
		t.Fatal("the large file was never read")
	}
	for _, rel := range after {
		if askedAtLarge[rel] {
			t.Errorf("%s, after the large file on the disk, was asked for before the large file was read", rel)
		}
	}
	for _, rel := range before {
		if !asked[rel] {
			t.Errorf("%s, a small file before the large one, was never asked for ahead", rel)
		}
	}
}
