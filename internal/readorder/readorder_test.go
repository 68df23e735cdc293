package readorder

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

func TestReadOrderValue(t *testing.T) {
	var o Order
	if o.String() != "auto" {
		t.Fatalf("zero value is %q, want auto", o.String())
	}
	if o.Type() != "order" {
		t.Fatalf("Type() = %q", o.Type())
	}
	for _, s := range []string{"auto", "disk", "inode", "listing"} {
		if err := o.Set(s); err != nil {
			t.Fatalf("Set(%q): %v", s, err)
		}
		if o.String() != s {
			t.Fatalf("Set(%q) gave %q", s, o.String())
		}
	}
	for _, s := range []string{"", "Disk", "physical", "listing "} {
		o = Inode
		err := o.Set(s)
		if err == nil || !strings.Contains(err.Error(), "auto, disk, inode or listing") {
			t.Fatalf("Set(%q) = %v, want an error naming the choices", s, err)
		}
		if o != Inode {
			t.Fatalf("a failed Set(%q) changed the value to %q", s, o)
		}
	}
}

func TestReadOrderAuto(t *testing.T) {
	for _, c := range []struct {
		dev  fileio.Device
		want Order
	}{
		{fileio.Device{Name: "sdb", Rotational: true}, Disk},
		{fileio.Device{Name: "sdc", USB: true}, Disk}, // a USB stick or USB SSD: the bridge may hide the kind
		{fileio.Device{Name: "sdd", Rotational: true, USB: true}, Disk},
		{fileio.Device{Name: "vda", Rotational: true, Virtual: true}, Listing},
		{fileio.Device{Name: "nvme0n1"}, Listing},
		{fileio.Device{}, Listing}, // tmpfs, NFS: no block device
	} {
		got, why := forDevice(c.dev)
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.dev, got, c.want)
		}
		if !strings.Contains(why, c.dev.String()) || !strings.Contains(why, string(c.want)) {
			t.Errorf("%s: reason %q does not name the device and the order", c.dev, why)
		}
	}
	dir := t.TempDir()
	for _, o := range []Order{Disk, Inode, Listing} {
		if got, why := Choose(o, dir); got != o || why != "set by --order" {
			t.Errorf("Choose(%s) = %s, %q", o, got, why)
		}
	}
	want, _ := forDevice(fileio.DeviceOf(dir))
	for _, o := range []Order{"", Auto} {
		if got, _ := Choose(o, dir); got != want {
			t.Errorf("Choose(%q) = %s, want %s for %s", o, got, want, fileio.DeviceOf(dir))
		}
	}
}

// k is a key with a known place; u one without.
func k(phys int64, ino uint64, index int64) Key {
	return Key{Phys: phys, Known: true, Ino: ino, Index: index}
}

func u(ino uint64, index int64) Key { return Key{Ino: ino, Index: index} }

// orderOf adds keys (named by their position) to a window with room for
// all of them, flushes, and returns the positions in read order.
func orderOf(t *testing.T, order Order, keys []Key) []int {
	t.Helper()
	w := NewWindow[int](order, 0, 0)
	var got []int
	for i, key := range keys {
		got = append(got, w.Add(i, key, 100)...)
	}
	got = append(got, w.Flush()...)
	if w.Pending() != 0 {
		t.Fatalf("%d left pending after Flush", w.Pending())
	}
	return got
}

func TestReadWindowDiskOrder(t *testing.T) {
	keys := []Key{
		0: k(9<<20, 5, 0),
		1: u(40, 1), // no place: after every placed file, by inode
		2: k(1<<20, 90, 2),
		3: k(4<<20, 7, 3), // same place as 4 (a clone): inode decides
		4: k(4<<20, 3, 4),
		5: u(12, 5),
		6: k(4<<20, 3, 6), // same place and inode as 4 (a hard link): listing decides
		7: u(12, 7),
		8: k(0, 1, 8), // offset 0 is a place like any other
	}
	want := []int{8, 2, 4, 6, 3, 0, 5, 7, 1}
	if got := orderOf(t, Disk, keys); !slices.Equal(got, want) {
		t.Fatalf("disk order %v, want %v", got, want)
	}
}

func TestReadWindowInodeOrder(t *testing.T) {
	keys := []Key{
		0: k(9<<20, 5, 0),
		1: u(40, 1),
		2: k(1<<20, 90, 2),
		3: k(4<<20, 7, 3),
		4: u(5, 4), // same inode as 0: listing decides
		5: k(1, 1, 5),
	}
	want := []int{5, 0, 4, 3, 1, 2} // places play no part
	if got := orderOf(t, Inode, keys); !slices.Equal(got, want) {
		t.Fatalf("inode order %v, want %v", got, want)
	}
}

// TestReadWindowListing: listing order (and auto, which the caller should
// have resolved) hands every file straight back and holds nothing.
func TestReadWindowListing(t *testing.T) {
	for _, order := range []Order{Listing, Auto, ""} {
		w := NewWindow[string](order, 0, 0)
		for i, name := range []string{"c", "a", "b"} {
			got := w.Add(name, k(int64(100-i), uint64(10-i), int64(i)), 1<<30)
			if !slices.Equal(got, []string{name}) {
				t.Fatalf("%q: Add(%q) = %v, want it back at once", order, name, got)
			}
			if w.Pending() != 0 {
				t.Fatalf("%q: %d pending", order, w.Pending())
			}
		}
		if got := w.Flush(); got != nil {
			t.Fatalf("%q: Flush() = %v", order, got)
		}
	}
}

// TestReadWindowBounds: a window closes when it holds maxFiles files or
// maxBytes of metadata, whichever comes first, and no file crosses from
// one window into another.
func TestReadWindowBounds(t *testing.T) {
	w := NewWindow[int](Disk, 3, 1000)
	var windows [][]int
	for i := range 7 {
		// Descending places: each window comes back reversed.
		if got := w.Add(i, k(int64(100-i), 1, int64(i)), 10); got != nil {
			windows = append(windows, slices.Clone(got))
		}
	}
	windows = append(windows, slices.Clone(w.Flush()))
	want := [][]int{{2, 1, 0}, {5, 4, 3}, {6}}
	if !slices.EqualFunc(windows, want, slices.Equal) {
		t.Fatalf("windows by count %v, want %v", windows, want)
	}

	w = NewWindow[int](Inode, 1000, 100)
	windows = nil
	for i, meta := range []int64{40, 40, 40, 90, 5, 120, 1} {
		if got := w.Add(i, u(uint64(50-i), int64(i)), meta); got != nil {
			windows = append(windows, slices.Clone(got))
		}
	}
	windows = append(windows, slices.Clone(w.Flush()))
	want = [][]int{{2, 1, 0}, {5, 4, 3}, {6}} // the file that passes the bound closes the window
	if !slices.EqualFunc(windows, want, slices.Equal) {
		t.Fatalf("windows by bytes %v, want %v", windows, want)
	}
	if got := w.Flush(); got != nil {
		t.Fatalf("a second Flush gave %v", got)
	}
}

// TestReadWindowRandom checks the contract on random keys and bounds: every
// file comes back exactly once, each window within its bounds and made of
// consecutive files of the listing, and in each window every neighbouring
// pair in order, with the order a function of the keys alone (shuffling a
// window's input does not change its output).
func TestReadWindowRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		order := []Order{Disk, Inode}[round%2]
		maxFiles := 1 + r.IntN(50)
		maxBytes := int64(1 + r.IntN(5000))
		n := r.IntN(400)
		keys := make([]Key, n)
		meta := make([]int64, n)
		for i := range keys {
			// Few distinct places and inodes, so that ties are common.
			keys[i] = Key{Phys: int64(r.IntN(20)) << 12, Known: r.IntN(4) > 0, Ino: uint64(r.IntN(30)), Index: int64(i)}
			meta[i] = int64(r.IntN(300))
		}
		w := NewWindow[int](order, maxFiles, maxBytes)
		var windows [][]int
		for i := range keys {
			if got := w.Add(i, keys[i], meta[i]); got != nil {
				windows = append(windows, slices.Clone(got))
			}
		}
		if got := w.Flush(); got != nil {
			windows = append(windows, slices.Clone(got))
		}
		next := 0
		for wi, win := range windows {
			if len(win) == 0 || len(win) > maxFiles {
				t.Fatalf("round %d: window %d holds %d files (max %d)", round, wi, len(win), maxFiles)
			}
			sorted := slices.Clone(win)
			slices.Sort(sorted)
			var bytes int64
			for j, i := range sorted {
				if i != next+j {
					t.Fatalf("round %d: window %d holds %v, not files %d.. in listing order", round, wi, sorted, next)
				}
				if j < len(sorted)-1 {
					bytes += meta[i]
				}
			}
			if bytes >= maxBytes {
				t.Fatalf("round %d: window %d went on past %d bytes of metadata", round, wi, maxBytes)
			}
			next += len(win)
			for j := 1; j < len(win); j++ {
				if compare(order, keys[win[j-1]], keys[win[j]]) >= 0 {
					t.Fatalf("round %d: window %d: %+v before %+v in %s order", round, wi, keys[win[j-1]], keys[win[j]], order)
				}
			}
			shuffled := slices.Clone(win)
			r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			again := NewWindow[int](order, len(win)+1, 1<<40)
			for _, i := range shuffled {
				again.Add(i, keys[i], meta[i])
			}
			if got := again.Flush(); !slices.Equal(got, win) {
				t.Fatalf("round %d: window %d: %v from shuffled input, %v in listing order", round, wi, got, win)
			}
		}
		if next != n {
			t.Fatalf("round %d: %d of %d files came back", round, next, n)
		}
	}
}

// The directory queue gives back the lowest inode number first, and
// directories of one inode number in the order they were pushed.
func TestDirQueue(t *testing.T) {
	var q DirQueue[string]
	for _, d := range []struct {
		name string
		ino  uint64
	}{{"c", 30}, {"a1", 10}, {"b", 20}, {"a2", 10}, {"root", 0}} {
		q.Push(d.name, d.ino)
	}
	var got []string
	for q.Len() > 0 {
		got = append(got, q.Pop())
	}
	if want := []string{"root", "a1", "a2", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("popped %q, want %q", got, want)
	}
}

// StatOrder leaves out the skipped names and orders the rest by inode
// number, in listing order among equals.
func TestStatOrder(t *testing.T) {
	names := []fileio.DirEntry{
		{Name: "z", Ino: 9}, {Name: "skipped", Ino: 1}, {Name: "a", Ino: 3}, {Name: "none1"}, {Name: "b", Ino: 3}, {Name: "none2"},
	}
	got := StatOrder(names, func(i int) bool { return names[i].Name == "skipped" })
	if want := []int{3, 5, 2, 4, 0}; !slices.Equal(got, want) {
		t.Errorf("StatOrder = %v, want %v", got, want)
	}
}
