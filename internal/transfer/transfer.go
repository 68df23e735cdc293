package transfer

import (
	"fmt"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/meta"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/verify"
)

// Job is one regular file to copy to Tmp, its temporary name (or its own
// name in a staged directory).
//
// With Pre, the source was already opened and read for its digest (a file
// whose size collides with another's): a file that fit in Buf is written
// from there, so its bytes are read once.
type Job struct {
	Src         *fileio.File // the source, open; the caller closes it
	Stat        fileio.Stat  // the walk's stat of the source
	SrcRes      int64        // resolution of the source's times (ns; see SettleWindow)
	SrcInoLoose bool         // the source's filesystem keeps no inode number that lasts (ChangedSince)
	Dir         *fileio.Dir  // the destination directory
	DirRel      string       // its path below the destination root
	Tmp         string
	Staged      bool // Tmp is the file's own name in a staged directory
	Resume      bool // a temporary an earlier run kept may be there to take up
	Again       bool // a copy made again after its read-back failed
	Buf         []byte
	Pre         *Preread
	// Remember is told the source's digest, the extra digests the records
	// need (nil: none read now) and when its read began, once the source
	// has been read whole and found to have held still.
	Remember func(sum verify.Sum, extra map[string]string, started time.Time)
}

// Result is what a transfer did: the temporary written, its source's
// digest and what the caller keeps open for its read-back.
type Result struct {
	Action  outcome.Action
	Sum     verify.Sum  // of the source
	Size    int64       // bytes copied
	Made    fileio.Stat // the temporary, once written
	Resumed int64       // bytes of a temporary left by an earlier run kept (Resume)
	Extra   map[string]string

	Checked bool      // read back already, as written (streamCheck, checkCached)
	ReadAt  time.Time // when that read-back began
	// Held is the temporary read back (Checked), kept open until it has
	// its name; HeldAhead: it counts against the budget of Config.TakeHeld.
	Held      *fileio.File
	HeldAhead bool
	// Written is the temporary as written, kept open until its read-back
	// has opened it again (see holdWritten); WrittenAhead as HeldAhead.
	Written      *fileio.File
	WrittenAhead bool
}

// Transfer is the copy of one regular file: its input, and what the copy
// found, with the steps as methods.
type Transfer struct {
	cfg *Config
	job *Job
	st  *fileio.Stat // the source's

	src, dst *fileio.File
	rs       *resumer     // the temporary of an earlier run, taken up
	sc       *streamCheck // a large file's read-back as it is written
	b        meta.Born    // what dst was created with
	kept     bool         // dst is held by the result
	res      Result

	hashed  bool      // the digest was computed from the source's bytes
	started time.Time // when the source's read began
}

// New returns the transfer of job under cfg.
func New(cfg *Config, job *Job) *Transfer {
	return &Transfer{cfg: cfg, job: job, st: &job.Stat, src: job.Src}
}

// Extra returns the extra digests read of the source (nil: none), also
// when the transfer failed.
func (t *Transfer) Extra() map[string]string { return t.res.Extra }

// Run copies the file and answers what it wrote. On an error the
// temporary is removed, unless the next run may take it up
// (Config.KeepsTemp).
func (t *Transfer) Run() (_ *Result, err error) {
	if err := t.create(); err != nil {
		return nil, err
	}
	defer func() {
		if !t.kept {
			t.dst.Close()
		}
		if err != nil && !t.cfg.KeepsTemp(t.st, t.job.Staged) {
			_ = t.job.Dir.Remove(t.job.Tmp)
		}
	}()
	t.sc = t.newStreamCheck()
	defer t.sc.close()
	if err := t.transfer(); err != nil {
		return nil, err
	}
	if err := t.finish(); err != nil {
		return nil, err
	}
	return &t.res, nil
}

// create opens the temporary: one an earlier run kept, to take up, or a
// new one, in place of a leftover of an interrupted run.
func (t *Transfer) create() (err error) {
	c, j := t.cfg, t.job
	dd, tmp := j.Dir, j.Tmp
	var perm uint32
	perm, t.b = c.Meta.CreateMode(dd, t.st)
	if j.Resume && c.Resume.Resumable(t.st) {
		if t.rs = t.openResume(); t.rs != nil {
			t.dst, t.b = t.rs.f, meta.Born{} // its owner and mode are set afresh
			return nil
		}
	}
	if !j.Staged { // in a staged directory, the stage is recorded
		c.Made.Before(j.DirRel, tmp, false)
		defer func() {
			var st *fileio.Stat
			if err == nil {
				if cur, serr := t.dst.Stat(); serr == nil {
					st = &cur
				}
			}
			c.Made.After(dd, j.DirRel, tmp, st, err)
		}()
	}
	t.dst, err = fileio.CreateTempMode(dd, tmp, perm)
	if fileio.IsExist(err) {
		if !c.Made.Leftover(dd, j.DirRel, tmp, fileio.ModeRegular) {
			return made.Taken(tmp, err)
		}
		// A leftover of an interrupted run.
		if rerr := dd.Remove(tmp); rerr != nil && !fileio.IsNotExist(rerr) {
			return fmt.Errorf("a leftover temporary of an earlier run cannot be removed (%w); if it is immutable or append-only (lsattr), remove it with chattr -i -a and rm", rerr)
		}
		t.dst, err = fileio.CreateTempMode(dd, tmp, perm)
	}
	return err
}

// transfer writes the data, and checks that the source held still while
// it was read.
func (t *Transfer) transfer() error {
	c, st := t.cfg, t.st
	t.started = time.Now()
	t.hashed = true
	if pre := t.job.Pre; pre != nil && pre.Whole && !c.MayClone(st) {
		// Read (and counted), hashed and found stable already: write what
		// is in the buffer.
		t.res.Action, t.res.Sum, t.res.Size, t.started = outcome.ActCopy, pre.Sum, pre.N, pre.Started
		if err := t.dst.WriteAt(t.job.Buf[:pre.N], 0); err != nil {
			return err
		}
		return c.charge(throttle.Write, pre.N)
	}
	if err := t.copyData(); err != nil {
		return err
	}
	if t.hashed {
		c.Stats.BytesRead.Add(t.res.Size) // copy_file_range and an unhashed clone read nothing here
	}
	after, err := t.src.Stat()
	if err != nil {
		return err
	}
	if ChangedSince(*st, t.job.SrcInoLoose, &after) || (st.Size != 0 && t.res.Size != st.Size) || Settling(&after, t.started, t.job.SrcRes) {
		return ErrChanged
	}
	return nil
}

// hash streams the source for its digest through the run's reader,
// handing each piece to sink, and keeps the extra digests read.
func (t *Transfer) hash(sink verify.Sink) (verify.Sum, int64, error) {
	sum, n, extra, err := t.cfg.Hash(t.cfg.Source(t.src, t.st), t.st.Size, t.job.Buf, sink)
	if err == nil && extra != nil {
		t.res.Extra = extra
	}
	return sum, n, err
}
