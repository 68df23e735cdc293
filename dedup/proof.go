package dedup

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/verify"
)

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

// Proof is how a target is shown to hold a duplicate's bytes before its
// data is shared: nothing is cloned from or linked to a file that is not.
// Its identity (device, inode, size and times) must be the one it was
// verified with (Find); content this run did not itself write and verify
// is read again (Prove), and under --dedup-verify=bytes the two files are
// compared byte for byte. Its fields are its whole input.
type Proof struct {
	// OpenDir opens a directory of the destination by its path relative
	// to the destination's root.
	OpenDir func(rel string) (*fileio.Dir, error)
	// Bytes is --dedup-verify=bytes: equal digests are not taken on trust.
	Bytes bool
	// Unverified is --verify=off: the run's own copies were not read back,
	// so every target is read again.
	Unverified bool
	// Bufs hands out the *[]byte buffers the readings use.
	Bufs *sync.Pool
	// Meter is --bwlimit (nil without), charged what the readings read
	// while Ctx (nil: never done) is not done; Count is told the bytes read (may be nil).
	Meter *throttle.Meter
	Ctx   context.Context
	Count func(n int64)
}

// Found is a target found in place: its directory, its name there and its
// stat, and the target opened for reading once Prove read it again (nil
// otherwise). Close closes what it holds.
type Found struct {
	Dir  *fileio.Dir
	Name string
	Cur  fileio.Stat
	File *fileio.File
}

// Close closes the target's directory and file.
func (f *Found) Close() {
	if f.File != nil {
		f.File.Close()
	}
	f.Dir.Close()
}

// Find opens the directory of a target and stats it there. It reports
// false, having closed what it opened, unless the target is in place
// exactly as it was when its read-back matched: stale content is never
// shared.
func (pf Proof) Find(t *Target) (*Found, bool) {
	placed, ok := t.InPlace()
	if !ok {
		return nil, false
	}
	dir, name := splitRel(t.Rel)
	td, err := pf.OpenDir(dir)
	if err != nil {
		return nil, false
	}
	cur, err := td.Lstat(name)
	if err != nil || !StillPlaced(&cur, placed) {
		td.Close()
		return nil, false
	}
	return &Found{Dir: td, Name: name, Cur: cur}, true
}

// Gone reports whether a file the cache says the destination holds is
// missing or changed since (see Index.Begin).
func (pf Proof) Gone(t *Target) bool {
	f, ok := pf.Find(t)
	if ok {
		f.Close()
	}
	return !ok
}

// Dup is the duplicate a target is proven for.
type Dup struct {
	Sum verify.Sum
	// Own stats the name the duplicate is to take: a target that already
	// is this name (or a link of it, as after an earlier dedup and now
	// --force) cannot be shared, since renaming a link onto the same inode
	// does nothing, and would leave the temporary.
	Own func() (fileio.Stat, error)
	// Open opens the duplicate's source, for the comparison of bytes.
	Open func() (*fileio.File, error)
}

// Prove finds t (Find) and shows that it holds d's bytes; it returns the
// target found, to be closed by the caller, or false. The read-back of
// the new name checks the content again.
func (pf Proof) Prove(t *Target, d Dup) (*Found, bool) {
	f, ok := pf.Find(t)
	if !ok {
		return nil, false
	}
	if own, err := d.Own(); err == nil && own.Dev == f.Cur.Dev && own.Ino == f.Cur.Ino {
		f.Close()
		return nil, false
	}
	if pf.Bytes {
		if same, err := pf.sameBytes(d, f); err != nil || !same {
			f.Close()
			return nil, false
		}
	}
	// Content this run did not itself write and verify (a file from before
	// the run, or any file under --verify=off) is read again first, through
	// the descriptor a clone is then made from: its cache entry or its
	// placement vouches for its stat, not for the bytes on the device.
	if t.External || pf.Unverified {
		var err error
		if f.File, err = f.Dir.Open(f.Name, false); err != nil {
			f.Close()
			return nil, false
		}
		if !pf.rehash(f.File, &f.Cur, d.Sum, t.External) {
			f.Close()
			return nil, false
		}
	}
	return f, true
}

// rehash reads a target afresh through tf and reports whether it is still
// the file as placed (cur) and holds sum. A file from before the run
// (external) is read past its cached pages where the platform can, so that
// what was cached before it rotted on the device cannot vouch for it.
func (pf Proof) rehash(tf *fileio.File, cur *fileio.Stat, sum verify.Sum, external bool) bool {
	if external {
		_ = tf.DropCache()
	}
	before, err := tf.Stat()
	if err != nil || PlacedOf(cur) != PlacedOf(&before) {
		return false
	}
	buf := pf.Bufs.Get().(*[]byte)
	defer pf.Bufs.Put(buf)
	got, n, err := verify.Stream(tf, before.Size, false, *buf, pf.Meter.Sink(pf.ctx()))
	pf.count(n)
	if err != nil || n != before.Size || got != sum {
		return false
	}
	after, err := tf.Stat()
	return err == nil && PlacedOf(&before) == PlacedOf(&after)
}

// sameBytes compares the duplicate's source with the target byte for byte
// (--dedup-verify=bytes).
func (pf Proof) sameBytes(d Dup, f *Found) (bool, error) {
	a, err := d.Open()
	if err != nil {
		return false, err
	}
	defer a.Close()
	b, err := f.Dir.Open(f.Name, false)
	if err != nil {
		return false, err
	}
	defer b.Close()
	ba, bb := pf.Bufs.Get().(*[]byte), pf.Bufs.Get().(*[]byte)
	defer pf.Bufs.Put(ba)
	defer pf.Bufs.Put(bb)
	for off := int64(0); ; {
		n, err := a.ReadFull(*ba, off)
		if err != nil {
			return false, err
		}
		m, err := b.ReadFull((*bb)[:len(*ba)], off)
		if err != nil {
			return false, err
		}
		if err := pf.Meter.Charge(pf.ctx(), throttle.Read, int64(n+m)); err != nil {
			return false, err
		}
		if n != m || !bytes.Equal((*ba)[:n], (*bb)[:m]) {
			return false, nil
		}
		pf.count(int64(n + m))
		if n < len(*ba) {
			return true, nil
		}
		off += int64(n)
	}
}

func (pf Proof) ctx() context.Context {
	if pf.Ctx == nil {
		return context.Background()
	}
	return pf.Ctx
}

func (pf Proof) count(n int64) {
	if pf.Count != nil {
		pf.Count(n)
	}
}

// splitRel splits a slash-separated path into its directory and its last
// name.
func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}
