package drives

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
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
//
// Watch answers; the caller acts: a verdict says whether the run is to be
// cancelled (the destination went) or halted (a source went, or the
// destination is full: Halted), and the caller puts in place and flushes
// what it had verified and fills in the counts of the error it returns.

// goneStreak is how many files in a row may fail with I/O errors before
// the run takes the drive for gone although its root still answers.
const goneStreak = 16

// DriveGoneError is the fatal error of a run whose source or destination
// filesystem stopped answering. The run returns it after putting in place
// and flushing what it had verified (where the destination still answers).
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
		return fmt.Sprintf("the %s filesystem of %q%s is gone at the end of the run: %s; the %d files copied or unchanged are not where they should be", e.Side, e.Root, fs, refusal.Text(e.Err), e.Kept)
	}
	return fmt.Sprintf("the %s filesystem of %q%s stopped answering at %q: %s; stopped, keeping the %d files already in place", e.Side, e.Root, fs, e.At, refusal.Text(e.Err), e.Kept)
}

// DestGone checks, before a run reports success, that the destination's
// path still leads to the directory it wrote to: a filesystem unmounted
// lazily (umount -l) during the run goes on taking writes through the
// descriptors, and nothing fails, but what was written is no longer under
// the path the user gave. It returns nil, or the error without Kept, which
// the caller counts.
func (w *Watch) DestGone() *DriveGoneError {
	for i := range w.roots {
		r := &w.roots[i]
		if r.side != "destination" {
			continue
		}
		if err := r.check(); err != nil {
			return &DriveGoneError{Side: r.side, Root: r.path, FSType: r.fstype, Err: err}
		}
	}
	return nil
}

// Unwrap returns what showed the drive gone.
func (e *DriveGoneError) Unwrap() error { return e.Err }

// watchedRoot is a directory whose filesystem the run checks after errors.
type watchedRoot struct {
	side   string
	path   string
	d      *fileio.Dir
	key    [2]uint64 // device and inode of the directory at the start
	fstype string
}

// Watch holds the roots and what was found, and says when the run is to
// stop because a drive is gone or the destination full. The zero value
// watches nothing; its methods are safe for concurrent use, but for Add
// and Close, which the run calls before and after its stages.
type Watch struct {
	mu     sync.Mutex
	roots  []watchedRoot
	own    []*fileio.Dir // opened by watch, closed by close
	gone   *DriveGoneError
	full   *DestFullError
	halt   atomic.Bool  // a source is gone or the destination full: copy nothing more, commit what was read
	streak atomic.Int32 // files failed with I/O errors since one was placed
}

// Root is a directory whose filesystem the run is to watch: the input of
// Add.
type Root struct {
	Side string      // "source" or "destination", as DriveGoneError names it
	Path string      // as given
	Dir  *fileio.Dir // opened, and kept open by the caller; nil: Path is opened here, and closed by Close
}

// Add watches a root. One that cannot be opened or asked is not watched
// (the run fails on it by itself); a directory watched already is not
// watched twice.
func (w *Watch) Add(root Root) {
	side, path, d := root.Side, root.Path, root.Dir
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
		if r.key == [2]uint64{st.Dev, st.Ino} {
			return
		}
	}
	t, _ := fileio.FSType(path)
	w.roots = append(w.roots, watchedRoot{side: side, path: path, d: d, key: [2]uint64{st.Dev, st.Ino}, fstype: t})
}

// Close closes the directories Add opened.
func (w *Watch) Close() {
	for _, d := range w.own {
		d.Close()
	}
}

// Placed records a file put in place: the streak of failures is broken.
func (w *Watch) Placed() { w.streak.Store(0) }

// check says why r's filesystem no longer answers, or nil.
func (r *watchedRoot) check() error {
	if err := fileio.Answers(r.d); err != nil {
		return err
	}
	st, err := fileio.StatPath(r.path)
	if err != nil {
		return err
	}
	if [2]uint64{st.Dev, st.Ino} != r.key {
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

// Verdict is what Judge and Full make of a failure.
type Verdict struct {
	// Fallout: the failure is fallout of a drive found gone (or of a full
	// destination found before), not to be reported on its own.
	Fallout bool
	// Cancel: the destination's filesystem is gone, found by this call;
	// nothing more can be written or checked there, and the caller
	// cancels the run.
	Cancel bool
}

// Judge judges the failure err of rel: Fallout when a root's filesystem
// is gone (now, or found so before). A source found gone halts the run
// (Halted): the destination still answers, so the files read whole and
// written are flushed, read back and put in place as usual, and nothing
// more is read. A failure that is not a file's last try (last false: a
// read to be retried) does not count towards the streak.
func (w *Watch) Judge(rel string, err error, last bool) Verdict {
	errno := fileio.Errno(err)
	if !ioErrno(errno) && errno != syscall.ENOENT {
		return Verdict{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone != nil {
		return Verdict{Fallout: true}
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
		return Verdict{}
	}
	if gone == nil {
		return Verdict{}
	}
	w.gone = &DriveGoneError{Side: gone.side, Root: gone.path, FSType: gone.fstype, At: rel, Err: why}
	if gone.side == "destination" {
		return Verdict{Fallout: true, Cancel: true}
	}
	// The destination still answers: the files read whole and written
	// are flushed, read back and put in place as usual; nothing more
	// is read.
	w.halt.Store(true)
	return Verdict{Fallout: true}
}

// Halted reports whether a source went away or the destination is full:
// the walk and the copy stop, the commit of what was written goes on.
func (w *Watch) Halted() bool { return w.halt.Load() }

// rootOf is the watched root that the path in err lies under (the
// destination when none matches).
func (w *Watch) rootOf(err error) *watchedRoot {
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

// Gone is the drive found gone, or nil.
func (w *Watch) Gone() *DriveGoneError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gone
}

// A destination that fills up makes every file after it fail the same way,
// one after another. The up-front check (preflight.CheckSpace) refuses
// only runs that cannot fit; when dedup finds less than it left out, the
// first file to fail with ENOSPC or EDQUOT stops the run as a source that
// went away does (Halted): no new file is started, the files written and pending are
// flushed, read back and put in place, and the run ends with one error.

// DestFullError is the error of a run stopped by a full destination. It
// counts as refusal.ErrSomeFailed (exit 3): some files were not copied,
// the others are in place.
type DestFullError struct {
	Root     string // the destination
	Copied   int64  // files copied when the run stopped
	Total    int64  // files found by then
	Bytes    int64  // bytes copied
	Free     int64  // free space at the end, -1 if unknown
	At       string // the file that did not fit
	Err      error
	Mismatch bool // some file read back different: the run is also a refusal.ErrMismatch
}

func (e *DestFullError) Error() string {
	free := "unknown"
	if e.Free >= 0 {
		free = refusal.HumanBytes(e.Free)
	}
	return fmt.Sprintf("destination full: %q has no space left after %d of %d files (%s); free space: %s; make room and rerun: what is in place is kept",
		e.Root, e.Copied, e.Total, refusal.HumanBytes(e.Bytes), free)
}

// Unwrap returns the failure that showed the destination full.
func (e *DestFullError) Unwrap() error { return e.Err }

// Is makes a full destination a refusal.ErrSomeFailed (and a
// refusal.ErrMismatch when a file also read back different).
func (e *DestFullError) Is(target error) bool {
	return target == refusal.ErrSomeFailed || (target == refusal.ErrMismatch && e.Mismatch)
}

// Full judges the failure err of rel: on the first that says the
// destination has no room it halts the run and the verdict is not Fallout
// (the file is reported); a later one is fallout of the same.
func (w *Watch) Full(rel string, err error) Verdict {
	if !fileio.IsNoSpace(err) {
		return Verdict{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full != nil {
		return Verdict{Fallout: true}
	}
	w.full = &DestFullError{At: rel, Err: err}
	w.halt.Store(true)
	return Verdict{}
}

// FullErr is the error of the full destination found, or nil; the caller
// fills in Root and the counts.
func (w *Watch) FullErr() *DestFullError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.full
}
