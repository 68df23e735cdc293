package copyengine_test

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The FIEMAP ioctl (linux/fiemap.h), which golang.org/x/sys does not wrap.
const (
	fsIocFiemap        = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync     = 0x1        // flush the file before mapping it
	fiemapExtentLast   = 0x1
	fiemapExtentShared = 0x2000 // the extent's blocks are shared with another file
)

type fiemapExtent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

type fiemap struct {
	Start, Length        uint64
	Flags, Mapped, Count uint32
	_                    uint32
	Extents              [64]fiemapExtent
}

// extentBytes maps path with FIEMAP and returns how many bytes of its
// extents are marked shared (a reflink clone shares all of them) and how
// many are mapped in all.
func extentBytes(t testing.TB, path string) (shared, mapped int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var start uint64
	for {
		fm := fiemap{Start: start, Length: ^uint64(0) - start, Flags: fiemapFlagSync, Count: uint32(len(fiemap{}.Extents))}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&fm))); errno != 0 {
			t.Fatalf("FIEMAP %s: %v", path, errno)
		}
		if fm.Mapped == 0 {
			return shared, mapped
		}
		for _, x := range fm.Extents[:fm.Mapped] {
			mapped += int64(x.Length)
			if x.Flags&fiemapExtentShared != 0 {
				shared += int64(x.Length)
			}
			if x.Flags&fiemapExtentLast != 0 {
				return shared, mapped
			}
			start = x.Logical + x.Length
		}
	}
}
