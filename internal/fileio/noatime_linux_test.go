//go:build linux

package fileio

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenNoAtime: a read through OpenNoAtime leaves the file's access
// time where it was, where a read through Open moves it (checked first:
// on a filesystem mounted noatime there is nothing to compare).
func TestOpenNoAtime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("some bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	// An access time older than the modification time: relatime, the
	// default, updates it at the next read.
	setOld := func() {
		t.Helper()
		if err := os.Chtimes(name, old, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	readWith := func(open func() (*File, error)) time.Time {
		t.Helper()
		setOld()
		f, err := open()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := f.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		var st unix.Stat_t
		if err := unix.Stat(name, &st); err != nil {
			t.Fatal(err)
		}
		return time.Unix(st.Atim.Unix())
	}
	if got := readWith(func() (*File, error) { return d.Open("f", false) }); got.Equal(old) {
		t.Skipf("a read does not update access times on the filesystem of %s (mounted noatime?): nothing to compare", dir)
	}
	if got := readWith(func() (*File, error) { return d.OpenNoAtime("f") }); !got.Equal(old) {
		t.Errorf("access time after a read through OpenNoAtime: %v, want %v (left alone)", got, old)
	}
}

// TestReserveDescriptors: the descriptor table holds the descriptors asked
// for at once (FDSize in /proc/self/status), and no descriptor is left open.
func TestReserveDescriptors(t *testing.T) {
	before := fdSize(t)
	n := 4 * before
	if lim := OpenLimit(); lim > 0 && n > lim {
		t.Skipf("the descriptor limit (%d) is below %d: the table cannot grow here", lim, n)
	}
	open := countOpen(t)
	ReserveDescriptors(n)
	if got := fdSize(t); got < n {
		t.Errorf("descriptor table holds %d after ReserveDescriptors(%d) (it held %d)", got, n, before)
	}
	if got := countOpen(t); got != open {
		t.Errorf("%d descriptors open after ReserveDescriptors, %d before", got, open)
	}
}

func fdSize(t *testing.T) int {
	t.Helper()
	n, err := DescriptorTableSize()
	if err != nil {
		t.Skipf("the descriptor table's size is not known here: %v", err)
	}
	return n
}

func countOpen(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}
