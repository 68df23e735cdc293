package copyengine_test

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestStreamCheckDropsBehind: a large file read back as it is written with
// --verify=device leaves (almost) none of its pages in the page cache: each
// window is let go once it is written back and read back. Without the drop
// every page would stay cached (direct reads do not evict them).
func TestStreamCheckDropsBehind(t *testing.T) {
	t.Parallel()
	const size = 64 << 20
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "big"), pattern(43, size))
	dst := filepath.Join(scratchDir(t), "dst")
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: copyengine.VerifyDevice})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	cached := residentPages(t, filepath.Join(dst, "big"))
	pages := size / os.Getpagesize()
	t.Logf("%d of %d pages of the copy are in the page cache", cached, pages)
	if cached > pages/8 {
		t.Errorf("%d of %d pages of the copy stayed in the page cache; want them dropped behind the write", cached, pages)
	}
}

// residentPages counts the pages of the file that are in the page cache
// (mincore over a read-only mapping, which touches none of them).
func residentPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys has no wrapper for mincore(2).
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
