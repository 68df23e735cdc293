package transfer

import (
	"time"

	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// finish tells Remember the source's digest, checks the written file where
// that is done here, gives it the source's metadata and fills the result.
func (t *Transfer) finish() error {
	c, j, dst, r := t.cfg, t.job, t.dst, &t.res
	if t.hashed && j.Remember != nil {
		j.Remember(r.Sum, r.Extra, t.started)
	}
	r.Resumed = t.rs.resumedAt()
	cached := r.Action == outcome.ActCopy && t.hashed && t.sc == nil && c.Verify == outcome.VerifyCache
	if cached {
		t.checkCached()
	}
	// The inode written, for the checks of its identity, is taken only
	// now that it has been written and read: a stat asks for the file's
	// change time, and on Linux 6.13 and later (multigrain timestamps) the
	// next write or read of a file whose change time was asked for moves
	// its times at a finer grain, which dirties its inode once more: on
	// ext4, one more journal handle per file (20,000 more for 20,000 files,
	// counted with the ext4_mark_inode_dirty tracepoint). Its device, inode
	// number and mode do not change with the writes.
	var err error
	if r.Made, err = dst.Stat(); err != nil {
		return err
	}
	if !cached && r.Action == outcome.ActCopy && t.hashed && t.sc.finish(r.Size, r.Sum) && t.sc.readInode(&r.Made) {
		r.Checked, r.ReadAt = true, t.sc.began
	}
	if err := c.Meta.Apply(dst, t.src, t.st, t.b, &r.Made); err != nil {
		return err
	}
	if c.Verify == outcome.VerifyOff {
		if err := dst.SetTimesAs(j.Dir, j.Tmp, t.st.Atime, t.st.Mtime); err != nil {
			return err
		}
		c.KeepBtime(j.Dir, j.Tmp, t.st)
	}
	if r.Checked {
		// The committer needs the inode that was read back: dst is it. A
		// file that cannot hold it open (too many descriptors held already)
		// is read back again by the committer instead.
		if c.TakeHeld() {
			r.Held, r.HeldAhead = dst, true
			t.kept = true
			c.Stats.BytesVerified.Add(r.Size)
			c.Stats.BytesRead.Add(r.Size)
		} else {
			r.Checked = false
		}
	}
	if !t.kept {
		// Asked only now: holdWritten takes a descriptor of the budget,
		// which a file held already (Held above) must not take again.
		if hold, ahead := t.holdWritten(); hold {
			r.Written, r.WrittenAhead = dst, ahead
			t.kept = true
		}
	}
	if r.Action == outcome.ActCopy {
		c.Stats.BytesWritten.Add(r.Size - r.Resumed)
	}
	return nil
}

// checkCached is the --verify=cache read-back of a file written by
// read/write, done right after the write through the descriptor it wrote
// with. Through the page cache the read-back reads the pages just written
// whether it runs now or after the flush, so doing it here proves the same
// and spares the committer an open and a close per file. A file that reads
// back different is left unchecked: the committer reads it again after
// the flush and, if it still differs, copies it once more.
func (t *Transfer) checkCached() {
	r := &t.res
	began := time.Now()
	got, n, err := verify.Stream(t.dst, r.Size, false, t.job.Buf, t.cfg.Meter.Sink(t.cfg.Ctx))
	if err != nil || n != r.Size || got != r.Sum {
		return
	}
	r.Checked, r.ReadAt = true, began
}

// holdWritten reports whether the temporary's descriptor is kept open in
// the result until its read-back has opened it again, and whether it
// counts against the budget of Config.TakeHeld. Where the destination's
// filesystem may number an inode afresh each time the kernel has forgotten
// it (hashcache.Policy's CheckInode is false: exfat-fuse and fusefat on
// libfuse's high-level API, the kernel's FAT and exFAT), a temporary
// closed after its write may have another number by the time its
// read-back opens it, and would fail as replaced by another file; one that
// is open the kernel cannot forget. The inode read back is held on from
// there until it has its name. A first copy is held within the budget of
// descriptors held ahead; past it the identity is compared as elsewhere,
// and a renumbered temporary is copied once more (Job.Again), which holds
// its one file whatever the budget: a renumbering costs a write, never a
// failure, and a temporary really replaced still fails.
func (t *Transfer) holdWritten() (hold, ahead bool) {
	c := t.cfg
	if c.Verify == outcome.VerifyOff || c.InodesLast {
		return false, false
	}
	if t.job.Again {
		return true, false
	}
	if !c.TakeHeld() {
		return false, false
	}
	return true, true
}
