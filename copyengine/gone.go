package copyengine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// A drive that goes away (a USB stick pulled, a FUSE driver that died, a
// disk that stops answering) makes every remaining file fail, each with the
// same error. Instead the run stops at the first sign, with one error that
// says which filesystem went and where the run was, and keeps what it had
// placed and verified.
//
// A single I/O error is not such a sign: a bad sector fails one file. So
// after a failure with an I/O error the run asks each of its roots (the
// destination, each source directory) whether its filesystem still answers:
// fstat and fstatfs of the descriptor opened at the start, and a stat of
// its path, which must still lead to the same directory (an unmounted drive
// leaves the mount point's own directory, or nothing, under the path). A
// root that fails either is gone. ENOTCONN and ECONNABORTED (a FUSE driver
// that died, for calls made after and during its death) and ENODEV (a
// device removed) mean a filesystem is gone whatever the roots say. And goneStreak files in a row failing with I/O errors, with none
// placed between them, mean a drive that answers stat but no longer reads
// or writes (one remounted read-only after errors, one that returns EIO for
// every block).

// goneStreak is how many files in a row may fail with I/O errors before
// the run takes the drive for gone although its root still answers.
const goneStreak = 16

// DriveGoneError is the fatal error of a run whose source or destination
// filesystem stopped answering. Run returns it after putting in place and
// flushing what it had verified (where the destination still answers).
type DriveGoneError struct {
	Side   string // "source" or "destination"
	Root   string // the directory of that side the run watched
	FSType string // its filesystem type as the run found it at the start ("" if unknown)
	At     string // the path (relative to the destination) where the run stopped
	Kept   int64  // files in place, verified or unchanged, when the run stopped
	Err    error  // what showed it
}

func (e *DriveGoneError) Error() string {
	fs := ""
	if e.FSType != "" {
		fs = " (" + e.FSType + ")"
	}
	if e.At == "" {
		return fmt.Sprintf("the %s filesystem of %q%s is gone at the end of the run: %s; the %d files copied or unchanged are not where they should be", e.Side, e.Root, fs, ErrText(e.Err), e.Kept)
	}
	return fmt.Sprintf("the %s filesystem of %q%s stopped answering at %q: %s; stopped, keeping the %d files already in place", e.Side, e.Root, fs, e.At, ErrText(e.Err), e.Kept)
}

// destStillThere checks, before a run reports success, that the
// destination's path still leads to the directory it wrote to: a
// filesystem unmounted lazily (umount -l) during the run goes on taking
// writes through the descriptors, and nothing fails, but what was written
// is no longer under the path the user gave.
func (dw *driveWatch) destStillThere() error {
	e := dw.e
	w := &e.drives
	for i := range w.roots {
		r := &w.roots[i]
		if r.side != "destination" {
			continue
		}
		if err := r.check(); err != nil {
			g := &DriveGoneError{Side: r.side, Root: r.path, FSType: r.fstype, Err: err}
			e.mu.Lock()
			g.Kept = e.sum.Copied + e.sum.Deduped + e.sum.Skipped
			e.mu.Unlock()
			return g
		}
	}
	return nil
}

func (e *DriveGoneError) Unwrap() error { return e.Err }

// watchedRoot is a directory whose filesystem the run checks after errors.
type watchedRoot struct {
	side   string
	path   string
	d      *fileio.Dir
	key    devIno // of the directory at the start
	fstype string
}

// driveWatch holds the roots and what was found, and stops the run when a
// drive is gone or the destination full.
type driveWatch struct {
	e      *engine
	mu     sync.Mutex
	roots  []watchedRoot
	own    []*fileio.Dir // opened by watch, closed by close
	gone   *DriveGoneError
	full   *DestFullError
	halt   atomic.Bool  // a source is gone or the destination full: copy nothing more, commit what was read
	streak atomic.Int32 // files failed with I/O errors since one was placed
}

// watch adds a root: d when given (the run keeps it open), else path opened
// here.
func (w *driveWatch) watch(side, path string, d *fileio.Dir) {
	if d == nil {
		var err error
		if d, err = fileio.OpenDir(path); err != nil {
			return // the run fails on it by itself
		}
		w.own = append(w.own, d)
	}
	st, err := d.Stat()
	if err != nil {
		return
	}
	for _, r := range w.roots {
		if r.key == (devIno{st.Dev, st.Ino}) {
			return
		}
	}
	t, _ := fileio.FSType(path)
	w.roots = append(w.roots, watchedRoot{side: side, path: path, d: d, key: devIno{st.Dev, st.Ino}, fstype: t})
}

func (w *driveWatch) close() {
	for _, d := range w.own {
		d.Close()
	}
}

// placed records a file put in place: the streak of failures is broken.
func (w *driveWatch) placed() { w.streak.Store(0) }

// check says why r's filesystem no longer answers, or nil.
func (r *watchedRoot) check() error {
	if err := r.d.Answers(); err != nil {
		return err
	}
	st, err := fileio.StatPath(r.path)
	if err != nil {
		return err
	}
	if (devIno{st.Dev, st.Ino}) != r.key {
		return errors.New("its path now leads to another directory (the drive was unmounted)")
	}
	return nil
}

// streakOp reports whether err is from a call that every drive answers
// for every file (opening, reading, writing, flushing, listing, renaming)
// and so counts towards the streak. A call a driver may not implement
// fails every entry that needs it: exfat-fuse answers every mknod with
// EIO, and a tree of FIFOs is not a dead drive.
func streakOp(err error) bool {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Op {
	case "open", "create", "read", "write", "sync", "syncfs", "stat", "readdir", "rename", "mkdir", "truncate":
		return true
	}
	return false
}

// ioErrno reports whether errno is one that a drive going away gives.
func ioErrno(errno syscall.Errno) bool {
	switch errno {
	case syscall.EIO, syscall.ENOTCONN, syscall.ECONNABORTED, syscall.ENODEV, syscall.ENXIO, syscall.ESTALE,
		syscall.ESHUTDOWN, syscall.ETIMEDOUT, syscall.EROFS:
		return true
	}
	return false
}

// driveGone judges the failure err of rel: it returns true when a root's
// filesystem is gone (now, or found so before), after cancelling the run.
// The failure is then fallout, not reported on its own.
func (dw *driveWatch) driveGone(rel string, err error) bool { return dw.judgeDrives(rel, err, true) }

// judgeDrives is driveGone; a failure that is not a file's last try (a read
// to be retried) does not count towards the streak.
func (dw *driveWatch) judgeDrives(rel string, err error, last bool) bool {
	e, w := dw.e, dw
	errno := fileio.Errno(err)
	if !ioErrno(errno) && errno != syscall.ENOENT {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone != nil {
		return true
	}
	streak := int32(0)
	if errno != syscall.ENOENT && last && streakOp(err) {
		streak = w.streak.Add(1)
	}
	var gone *watchedRoot
	var why error
	for i := range w.roots {
		if cerr := w.roots[i].check(); cerr != nil {
			gone, why = &w.roots[i], cerr
			break
		}
	}
	switch {
	case gone != nil:
	case errno == syscall.ENOTCONN || errno == syscall.ECONNABORTED || errno == syscall.ENODEV:
		gone, why = w.rootOf(err), err
	case streak >= goneStreak:
		gone, why = w.rootOf(err), fmt.Errorf("%d files in a row failed with I/O errors, the last: %w", streak, err)
	default:
		return false
	}
	if gone == nil {
		return false
	}
	w.gone = &DriveGoneError{Side: gone.side, Root: gone.path, FSType: gone.fstype, At: rel, Err: why}
	if gone.side == "destination" {
		e.cancel() // nothing more can be written or checked there
	} else {
		// The destination still answers: the files read whole and written
		// are flushed, read back and put in place as usual; nothing more
		// is read.
		w.halt.Store(true)
	}
	return true
}

// halted reports whether a source went away or the destination is full: the walk and the copy stop,
// the commit of what was written goes on.
func (dw *driveWatch) halted() bool { return dw.halt.Load() }

// rootOf is the watched root that the path in err lies under (the
// destination when none matches).
func (w *driveWatch) rootOf(err error) *watchedRoot {
	var pe *os.PathError
	var best *watchedRoot
	if errors.As(err, &pe) {
		for i := range w.roots {
			r := &w.roots[i]
			if (pe.Path == r.path || strings.HasPrefix(pe.Path, strings.TrimSuffix(r.path, "/")+"/")) && (best == nil || len(r.path) > len(best.path)) {
				best = r
			}
		}
	}
	if best != nil {
		return best
	}
	for i := range w.roots {
		if w.roots[i].side == "destination" {
			return &w.roots[i]
		}
	}
	if len(w.roots) > 0 {
		return &w.roots[0]
	}
	return nil
}

// goneErr is the drive found gone, or nil.
func (dw *driveWatch) goneErr() *DriveGoneError {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	return dw.gone
}

// stopGone ends a run whose drive went away: what is in place is made
// durable where the destination still answers (the source went), and the
// error says how much that is.
func (dw *driveWatch) stopGone(g *DriveGoneError) error {
	e := dw.e
	e.mu.Lock()
	g.Kept = e.sum.Copied + e.sum.Deduped + e.sum.Skipped
	e.mu.Unlock()
	if g.Side != "destination" && !e.opt.NoSync && !e.opt.DryRun && e.dstRoot != nil {
		if err := e.commit.flushDirs(); err != nil {
			return fmt.Errorf("%w; and flushing %q to stable storage: %w", g, e.dstRootPath, err)
		}
	}
	return g
}

// A destination that fills up makes every file after it fail the same way,
// one after another. The up-front check (preflight.CheckSpace) refuses only runs that
// cannot fit; when dedup finds less than it left out, the first file to fail
// with ENOSPC or EDQUOT stops the run as a source that went away does
// (halted): no new file is started, the files written and pending are
// flushed, read back and put in place, and the run ends with one error.

// DestFullError is the error of a run stopped by a full destination. It
// counts as ErrSomeFailed (exit 3): some files were not copied, the others
// are in place.
type DestFullError struct {
	Root     string // the destination
	Copied   int64  // files copied when the run stopped
	Total    int64  // files found by then
	Bytes    int64  // bytes copied
	Free     int64  // free space at the end, -1 if unknown
	At       string // the file that did not fit
	Err      error
	mismatch bool // some file read back different: the run is also an ErrMismatch
}

func (e *DestFullError) Error() string {
	free := "unknown"
	if e.Free >= 0 {
		free = HumanBytes(e.Free)
	}
	return fmt.Sprintf("destination full: %q has no space left after %d of %d files (%s); free space: %s; make room and rerun: what is in place is kept",
		e.Root, e.Copied, e.Total, HumanBytes(e.Bytes), free)
}

func (e *DestFullError) Unwrap() error { return e.Err }

// Is makes a full destination an ErrSomeFailed (and an ErrMismatch when a
// file also read back different).
func (e *DestFullError) Is(target error) bool {
	return target == ErrSomeFailed || (target == ErrMismatch && e.mismatch)
}

// destFull judges the failure err of rel: on the first that says the
// destination has no room it halts the run and returns false (the file is
// reported); a later one is fallout of the same and returns true.
func (dw *driveWatch) destFull(rel string, err error) bool {
	e := dw.e
	if !fileio.IsNoSpace(err) {
		return false
	}
	w := &e.drives
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full != nil {
		return true
	}
	w.full = &DestFullError{Root: e.dstRootPath, At: rel, Err: err}
	w.halt.Store(true)
	return false
}

// stopFull ends a run halted by a full destination: what is in place is
// made durable, and the error says how much that is and what is free.
func (dw *driveWatch) stopFull() error {
	e := dw.e
	dw.mu.Lock()
	f := dw.full
	dw.mu.Unlock()
	if f == nil {
		return nil
	}
	e.mu.Lock()
	f.Copied, f.Bytes, f.mismatch = e.sum.Copied, e.sum.Bytes, e.sum.Mismatches > 0
	e.mu.Unlock()
	f.Total = e.stats.FilesTotal.Load()
	f.Free = -1
	if sp, err := fileio.SpaceOf(e.dstRootPath); err == nil && sp.Known() {
		f.Free = sp.Free
	}
	if !e.opt.NoSync && !e.opt.DryRun && e.dstRoot != nil {
		if err := e.commit.flushDirs(); err != nil {
			return fmt.Errorf("%w; and flushing %q to stable storage: %w", f, e.dstRootPath, err)
		}
		e.record.rememberFlushed()
	}
	return f
}
