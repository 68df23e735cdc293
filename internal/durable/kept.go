package durable

import (
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Budget bounds the descriptors held open ahead of their use.
type Budget interface {
	Take() bool // takes one; false when none is to spare
	Give()      // gives one back
}

// Kept is what a temporary keeps open on its way to its final name: the
// descriptor of its write (until its read-back has opened it again), the
// one opened ahead for its read-back (Prefetch), and the inode read back
// (until it has its name). Each counts against the Budget it was given
// with, if any. The zero value holds nothing.
type Kept struct {
	back, held, written       *fileio.File
	backOf, heldOf, writtenOf Budget
	backAt                    time.Time // when back was opened for the read-back
}

// Hold keeps f, the inode read back, open until Close, counted against of
// (nil: against nothing).
func (k *Kept) Hold(f *fileio.File, of Budget) {
	k.unhold()
	k.held, k.heldOf = f, of
}

// Held is the inode read back (Hold, ReadBack), or nil.
func (k *Kept) Held() *fileio.File { return k.held }

// KeepWritten keeps f, the temporary as written, open until its read-back
// has opened it again, counted against of (nil: against nothing).
func (k *Kept) KeepWritten(f *fileio.File, of Budget) {
	k.written, k.writtenOf = f, of
}

// Close closes every descriptor k holds of its temporary: the inode read
// back, the one kept from its write and the one opened ahead for the
// read-back. It comes before the temporary's name is removed: a FUSE
// driver on libfuse's high-level API (exfat-fuse, ntfs-3g, fusefat) does
// not remove an open file but renames it to ".fuse_hidden..." until it is
// closed, and one that dies or is unplugged in between leaves that file on
// the drive.
func (k *Kept) Close() {
	k.unhold()
	k.CloseWritten()
	if k.back != nil {
		k.back.Close()
		k.back = nil
		k.backOf.Give()
	}
}

// CloseWritten closes the temporary's descriptor kept from its write, if
// any.
func (k *Kept) CloseWritten() {
	if k.written != nil {
		k.written.Close()
		k.written = nil
		if k.writtenOf != nil {
			k.writtenOf.Give()
			k.writtenOf = nil
		}
	}
}

func (k *Kept) unhold() {
	if k.held != nil {
		k.held.Close()
		k.held = nil
		if k.heldOf != nil {
			k.heldOf.Give()
			k.heldOf = nil
		}
	}
}

// takeBack takes the descriptor opened ahead for the read-back, and when
// it was opened; nil if there is none. It no longer counts against its
// budget: the read-back holds it from here on.
func (k *Kept) takeBack() (*fileio.File, time.Time) {
	f, at := k.back, k.backAt
	if f != nil {
		k.back = nil
		k.backOf.Give()
	}
	return f, at
}
