package dedup

import (
	"bytes"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// The proofs a target gives before its data is shared: nothing is cloned
// from or linked to a file that is not shown to hold the duplicate's bytes.
// Its identity (device, inode, size and times) must be the one it was
// verified with (StillPlaced); content this run did not itself write and
// verify is read again (Rehash); and under --dedup-verify=bytes the two
// files are compared byte for byte (SameBytes).

// PlacedOf is the identity of a file as st describes it.
func PlacedOf(st *fileio.Stat) Placed {
	return Placed{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime}
}

// StillPlaced reports whether cur is the file as it was placed and
// verified.
func StillPlaced(cur *fileio.Stat, placed Placed) bool {
	return PlacedOf(cur) == placed
}

// FoundMeta is the metadata a hard link to the file cur would share, for a
// target whose Meta is not known (External): its permission bits, owner
// and modification time as found.
func FoundMeta(cur *fileio.Stat) Meta {
	return Meta{Mode: cur.Mode & 0o7777, Uid: cur.Uid, Gid: cur.Gid, Mtime: cur.Mtime}
}

// Reread is the reading Rehash does: the buffer it reads through, where it
// counts the bytes read (may be nil), and the sink each block passes (a
// bandwidth limit; may be nil).
type Reread struct {
	Buf   []byte
	Count func(n int64)
	Sink  verify.Sink
}

// Rehash reads a target afresh through tf and reports whether it is still
// the file as placed (cur) and holds sum. A file from before the run
// (external) is read past its cached pages where the platform can, so that
// what was cached before it rotted on the device cannot vouch for it.
func Rehash(tf *fileio.File, cur *fileio.Stat, sum verify.Sum, external bool, r Reread) bool {
	if external {
		_ = tf.DropCache()
	}
	before, err := tf.Stat()
	if err != nil || PlacedOf(cur) != PlacedOf(&before) {
		return false
	}
	got, n, err := verify.Stream(tf, before.Size, false, r.Buf, r.Sink)
	if r.Count != nil {
		r.Count(n)
	}
	if err != nil || n != before.Size || got != sum {
		return false
	}
	after, err := tf.Stat()
	return err == nil && PlacedOf(&before) == PlacedOf(&after)
}

// Compare is the reading SameBytes does: two buffers of one length, charge
// asked before each pair of blocks is compared (a bandwidth limit; its
// error ends the comparison), and count told the bytes compared.
type Compare struct {
	A, B   []byte
	Charge func(n int64) error
	Count  func(n int64)
}

// SameBytes compares a and b byte for byte (--dedup-verify=bytes): equal
// digests are then not taken on trust.
func SameBytes(a, b *fileio.File, c Compare) (bool, error) {
	for off := int64(0); ; {
		n, err := a.ReadFull(c.A, off)
		if err != nil {
			return false, err
		}
		m, err := b.ReadFull(c.B[:len(c.A)], off)
		if err != nil {
			return false, err
		}
		if c.Charge != nil {
			if err := c.Charge(int64(n + m)); err != nil {
				return false, err
			}
		}
		if n != m || !bytes.Equal(c.A[:n], c.B[:m]) {
			return false, nil
		}
		if c.Count != nil {
			c.Count(int64(n + m))
		}
		if n < len(c.A) {
			return true, nil
		}
		off += int64(n)
	}
}
