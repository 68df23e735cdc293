package transfer

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/verify"
)

// copyData moves the bytes of src into dst by the first primitive of the
// ladder that works: FICLONE (same filesystem, --reflink auto or always),
// copy_file_range (same filesystem, only when no digest is needed and cloning
// is known not to work there, so it cannot silently clone, and not for a
// large file that is flushed as it is written), then read/write
// with the digest computed as the data streams (and, for a large file, its
// flush and read-back started as it is written: see streamCheck). It
// sets the action, the source digest and the length.
func (t *Transfer) copyData() error {
	c, st := t.cfg, t.st
	sameDev := st.Dev == c.DstDev
	if st.Size > 0 && !c.NoReflink {
		if done, err := t.clone(sameDev); done || err != nil {
			return err
		}
	}
	auto := !c.NoReflink && !c.ReflinkOnly
	if st.Size > 0 && sameDev && !c.NeedSum && auto && !st.Sparse() && t.sc == nil && !c.Shared {
		if done, err := t.copyRange(); done || err != nil {
			return err
		}
	}
	return t.stream()
}

// clone tries FICLONE; done is false when the copy is left to the next
// primitive.
func (t *Transfer) clone(sameDev bool) (done bool, err error) {
	c, st, r := t.cfg, t.st, &t.res
	if !sameDev || c.Clones.Broken(st.Dev) {
		if c.ReflinkOnly {
			return false, fmt.Errorf("--reflink=always: cannot clone here (different filesystems or no reflink support); use --reflink=auto")
		}
		return false, nil
	}
	err = t.dst.Clone(t.src)
	if err == nil {
		c.Clones.NoteWorks(st.Dev)
		if err := c.Meter.Moved(c.Ctx, st.Size); err != nil {
			return true, err
		}
		r.Action, r.Sum, r.Size, t.hashed = outcome.ActClone, verify.Sum{}, st.Size, c.NeedSum
		if c.NeedSum {
			// The clone moved no data through us: read the source once
			// for its digest, which the read-back is checked against.
			if r.Sum, r.Size, err = t.hash(c.Meter.Sink(c.Ctx)); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if c.ReflinkOnly {
		return false, fmt.Errorf("--reflink=always: %w", err)
	}
	if !fileio.IsFallback(err) {
		return false, err
	}
	// EINVAL is about this pair of files (a NOCOW file on btrfs,
	// say), not the filesystem: the next file may still clone.
	if !errors.Is(err, syscall.EINVAL) {
		c.Clones.NoteBroken(st.Dev)
	}
	return false, nil
}

// copyRange tries copy_file_range where cloning is known not to work.
func (t *Transfer) copyRange() (done bool, err error) {
	c, r := t.cfg, &t.res
	if !c.Clones.Broken(t.st.Dev) {
		return false, nil
	}
	n, err := t.copyRangePieces()
	if err == nil {
		r.Action, r.Sum, r.Size, t.hashed = outcome.ActCopy, verify.Sum{}, n, false // no digest: not needed
		return true, nil
	}
	if !fileio.IsFallback(err) || n > 0 {
		return false, err
	}
	return false, nil
}

// copyRangePieces copies the file with copy_file_range, in pieces no
// larger than --bwlimit's burst, each charged as it is done. It returns the
// bytes copied (fewer than the file's size when the source ended early).
func (t *Transfer) copyRangePieces() (int64, error) {
	c := t.cfg
	return c.Meter.Pieces(c.Ctx, t.st.Size, func(off, n int64) (int64, error) {
		return t.dst.CopyRange(t.src, off, off, n)
	})
}

// stream reads once, hashes and writes as the data streams. A sparse
// source's holes stay holes: the destination is sized first and only data
// is written.
func (t *Transfer) stream() (err error) {
	c, st, r := t.cfg, t.st, &t.res
	dst, rs, sc := t.dst, t.rs, t.sc
	sparse := st.Sparse()
	if sparse {
		if err := dst.Truncate(st.Size); err != nil {
			if !fileio.IsPermission(err) && !fileio.IsFallback(err) {
				return err
			}
			// fusefat cannot extend a file by truncate (EPERM): the
			// holes are written out as zeros instead.
			sparse = false
		}
	}
	r.Action, t.hashed = outcome.ActCopy, true
	var write verify.Sink = func(p []byte, off int64) error {
		if rs.same(c, p, off) {
			sc.wrote(off + int64(len(p))) // read back with the rest
			return nil
		}
		if err := dst.WriteAt(p, off); err != nil {
			return err
		}
		if err := c.charge(throttle.Write, int64(len(p))); err != nil {
			return err
		}
		sc.wrote(off + int64(len(p)))
		return nil
	}
	if sparse {
		write = verify.SkipZeros(write) // holes stay holes
	}
	// Every byte read is charged to --bwlimit, zeros too: Stream is told
	// the file is not sparse, and the sink leaves them out.
	charge := c.Meter.Sink(c.Ctx)
	r.Sum, r.Size, err = t.hash(func(p []byte, off int64) error {
		if err := charge(p, off); err != nil {
			return err // a cancel stops a large file mid-way, not after it
		}
		return write(p, off)
	})
	return err
}
