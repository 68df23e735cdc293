package transfer

import (
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/verify"
)

// A large file is flushed and read back while it is being written, rather
// than after: every checkWindow bytes the writeback of what was just
// written is started, and the window before it (whose writeback has had a
// window's time to finish) is read back and hashed. The device then writes
// while the copy goes on, and reads back while it writes, so that by the
// last byte little is left to flush or to read. Left alone, the kernel
// would hold the whole file as dirty pages until the batch's flush, and a
// read-back could only start after that.
//
// The read-back is the same check copyengine's committer makes: with
// --verify device the temporary is opened with O_DIRECT, so each read
// comes from the device (the kernel writes back the range's dirty pages
// before it reads it); with --verify cache it reads the page cache. Anything that stops the
// check early (no direct I/O on this filesystem, a read error, a mismatch)
// leaves the file unchecked, and the committer reads it back after the
// flush the usual way, which recopies on a mismatch and reports errors.
const (
	checkWindow    = 16 << 20
	streamCheckMin = 2 * checkWindow // smaller files are read back in batches
	checkBufSize   = 4 << 20
)

// streamCheck is the flush and read-back of a large file as it is
// written.
type streamCheck struct {
	dst    *fileio.File                 // the temporary being written
	open   func() (*fileio.File, error) // opens the temporary for the read-back, until start
	f      *fileio.File                 // the temporary, open for the read-back; nil to only start writeback
	direct bool
	kicked int64 // bytes whose writeback has been started (the writer's)
	began  time.Time

	// With direct reads a goroutine of its own reads back, so that the
	// copy goes on while the device writes a window and reads it back.
	// The writer hands it the end of each window it has started the
	// writeback of; a full channel holds the writer back. The fields below
	// are the reader's (the writer's, without one), until done is closed.
	ends    chan int64
	done    chan struct{}
	buf     []byte
	h       *verify.Hasher
	checked int64 // bytes read back and hashed
	dropped int64 // bytes whose cached pages have been let go
	failed  bool

	charge func(throttle.Kind, int64) error // --bwlimit, for each piece read back
}

// readAhead is how many windows the writer may be ahead of a direct
// read-back.
const readAhead = 4

// newStreamCheck prepares the in-flight flush and read-back of a large file
// being written to the temporary, or returns nil when the file is not one.
// Nothing is opened or started until the first window is written: a file
// that is cloned instead never needs the read-back.
func (t *Transfer) newStreamCheck() *streamCheck {
	c, st, dd, tmp := t.cfg, t.st, t.job.Dir, t.job.Tmp
	if st.Size < streamCheckMin || st.Sparse() {
		return nil
	}
	sc := &streamCheck{dst: t.dst, charge: c.charge}
	if c.Verify != outcome.VerifyOff {
		sc.open = func() (*fileio.File, error) {
			if c.Verify == outcome.VerifyDevice {
				return fileio.OpenDirect(dd, tmp)
			}
			return dd.Open(tmp, false)
		}
		sc.direct = c.Verify == outcome.VerifyDevice
	}
	return sc
}

// start opens the temporary for the read-back and, for direct reads,
// starts the reader. Where the temporary cannot be opened so (no direct I/O
// on this filesystem) nothing is read back here: the committer does it.
func (sc *streamCheck) start() {
	open := sc.open
	sc.open = nil
	f, err := open()
	if err != nil {
		return
	}
	sc.f, sc.h, sc.began = f, verify.NewHasher(), time.Now()
	sc.buf = fileio.AlignedBuffer(checkBufSize)
	if sc.direct {
		sc.ends, sc.done = make(chan int64, readAhead), make(chan struct{})
		go func() {
			defer close(sc.done)
			for end := range sc.ends {
				sc.readTo(end)
				sc.dropTo(end)
			}
		}()
	}
}

// wrote notes that the temporary now holds end bytes.
func (sc *streamCheck) wrote(end int64) {
	if sc == nil || end-sc.kicked < checkWindow {
		return
	}
	if sc.open != nil {
		sc.start()
	}
	sc.dst.StartWriteback(sc.kicked, end-sc.kicked)
	prev := sc.kicked
	sc.kicked = end
	switch {
	case sc.ends != nil:
		sc.ends <- end
	case sc.f != nil:
		sc.readTo(end) // from the page cache
		sc.dropTo(prev)
	default:
		sc.dropTo(prev)
	}
}

// dropTo lets go of the cached pages of the copy up to end, once they are
// written back (and read back, when checked): nothing reads them again.
// Dropping behind the write keeps a large copy from filling the page cache
// and evicting what other programs use; and the pages it frees are the
// ones the next windows are written into, which on a virtual machine that
// hands freed memory back to its host saves faulting in fresh memory for
// every page of the file.
func (sc *streamCheck) dropTo(end int64) {
	if sc.f != nil && end > sc.checked {
		end = sc.checked // not read back yet
	}
	if end > sc.dropped {
		sc.dst.DropRange(sc.dropped, end-sc.dropped)
		sc.dropped = end
	}
}

// finish starts the writeback of the rest, reads back what is left and
// reports whether the copy of size bytes read back as want.
func (sc *streamCheck) finish(size int64, want verify.Sum) bool {
	if sc == nil {
		return false
	}
	if size > sc.kicked {
		sc.dst.StartWriteback(sc.kicked, size-sc.kicked)
		sc.kicked = size
	}
	if sc.f == nil {
		return false
	}
	if sc.ends != nil {
		sc.ends <- size
		sc.stop()
	} else {
		sc.readTo(size)
	}
	return !sc.failed && sc.checked == size && sc.h.Sum() == want
}

// readInode reports whether the read-back read the inode made (the
// temporary was not swapped for another file before it was opened for it).
func (sc *streamCheck) readInode(made *fileio.Stat) bool {
	st, err := sc.f.Stat()
	return err == nil && st.Dev == made.Dev && st.Ino == made.Ino
}

// stop ends the reader and waits for it.
func (sc *streamCheck) stop() {
	if sc.ends != nil {
		close(sc.ends)
		<-sc.done
		sc.ends = nil
	}
}

// close stops the reader and closes what the read-back opened.
func (sc *streamCheck) close() {
	if sc != nil && sc.f != nil {
		sc.stop()
		sc.f.Close()
	}
}

// readTo reads back and hashes the bytes up to end.
func (sc *streamCheck) readTo(end int64) {
	for sc.f != nil && !sc.failed && sc.checked < end {
		n := min(int64(len(sc.buf)), end-sc.checked)
		want := n
		if sc.direct {
			// Direct reads cover whole blocks; the last one of the file
			// comes back short.
			want = (n + fileio.DirectAlign - 1) &^ (fileio.DirectAlign - 1)
		}
		got, err := sc.f.ReadAt(sc.buf[:want], sc.checked)
		if err != nil || int64(got) < n { // a short read: the file ended early
			sc.failed = true
			return
		}
		sc.h.Write(sc.buf[:n])
		sc.checked += n
		if sc.charge != nil && sc.charge(throttle.Read, n) != nil {
			sc.failed = true // a cancelled run: the committer never reads it
			return
		}
	}
}
