package copyengine

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fastcopy/fastcopy/internal/records"
)

// mhlFolder is the folder below a history's root that holds its ASC MHL
// history (generation files and ascmhl_chain.xml).
const mhlFolder = records.MHLFolder

// ErrMHL is returned (wrapped, by an *MHLError) by Run when a run with
// Options.MHL put its files in place but could not write the ASC MHL
// generation: the copy stands, the history does not record it.
var ErrMHL = errors.New("the ASC MHL history was not written")

// MHLError says why a run's ASC MHL generation was not written.
type MHLError struct {
	Dest string // the destination whose history it is
	Err  error
}

func (e *MHLError) Error() string {
	return fmt.Sprintf("%q: the ASC MHL history was not written: %s", e.Dest, ErrText(e.Err))
}

// Unwrap returns ErrMHL and the cause.
func (e *MHLError) Unwrap() []error { return []error{ErrMHL, e.Err} }

// checkMHL refuses what a history of the copy cannot record honestly:
// -u and --ignore-existing keep destination files that are not the
// source's, whose digests the run does not take.
func (o *Options) checkMHL() error {
	if !o.MHL {
		return nil
	}
	if o.Update || o.IgnoreExisting {
		return &RefusalError{Msg: "--mhl records every source file as the copy holds it, which -u and --ignore-existing leave unread", Hint: "leave -u and --ignore-existing out, or --mhl"}
	}
	return nil
}

// checkMHLPlan refuses a run whose destination root is not a folder the
// copy fills (a file SOURCE copied onto a file name: its directory is not
// the copy's), and a SOURCE that would land on DEST/ascmhl.
func (o *Options) checkMHLPlan(p *plan) error {
	if !o.MHL {
		return nil
	}
	if p.ontoFile {
		return refuse(o.Dest, "--mhl records a folder's history, and this copies a file onto the name "+quote(o.Dest), "copy into a directory: fastcopy --mhl FILE DIR/")
	}
	for _, r := range p.roots {
		if isMHLFolder(r.dstRel) {
			return refuse(r.src, "would land on "+quote(filepath.Join(p.dstRoot, mhlFolder))+", the folder of DEST's ASC MHL history", "copy it under another name, or leave --mhl out")
		}
	}
	return nil
}

// isMHLFolder says whether the name at a history's root is its ascmhl
// folder, in any case (a destination that folds names holds one).
func isMHLFolder(name string) bool { return records.IsMHLFolder(name) }

// leaveOutSourceMHL says whether the walk leaves out the entry name of the
// source directory copied onto the destination root: with --mhl, a
// source's own ascmhl folder (a card offloaded before) is not copied as
// data onto DEST's, whose chain it would replace. The run says so once.
func (rk *recordKeeper) leaveOutSourceMHL(srcDir, dstRel, name string) bool {
	e := rk.e
	if !e.opt.MHL || dstRel != "" || !isMHLFolder(name) {
		return false
	}
	note := fmt.Sprintf("%q is the source's own ASC MHL history: not copied; %q keeps its own history, which this run extends", filepath.Join(srcDir, name), filepath.Join(e.dstRootPath, mhlFolder))
	e.count(func(s *Summary) { s.MHLNotes = append(s.MHLNotes, note) })
	return true
}

// writeMHL records the run as the next generation of DEST's ASC MHL
// history (records.MHL), once its files are placed and flushed and while
// it holds DEST's lock. The generation lists each file the run put or
// found in place, with the digest the run has for it: for a copy, the
// source's, which its read-back matched (with --verify=off, the one taken
// while the source was read); for a file found unchanged, the one both
// sides were found to hold (read, or from the hash cache's valid
// entries). Files that failed are not listed.
//
// A failure is kept in the summary (MHLError) and in rk.mhlErr.
func (rk *recordKeeper) writeMHL() {
	e := rk.e
	if !e.opt.MHL || e.skipWrite() || e.dstRoot == nil {
		return
	}
	m := records.MHL{
		Root:        e.dstRoot,
		RootPath:    e.dstRootPath,
		Formats:     e.opt.mhlFormatNames(),
		ToolVersion: e.opt.MHLToolVersion,
		VerifyOff:   e.opt.Verify == VerifyOff,
	}
	for _, dm := range e.commit.walkedDirs() {
		m.Dirs = append(m.Dirs, dm.dstRel)
	}
	w, err := m.Write(&rk.set)
	if err != nil {
		rk.mhlErr = &MHLError{Dest: e.dstRootPath, Err: err}
		e.sum.MHLError = ErrText(err)
		return
	}
	e.sum.MHL, e.sum.MHLSeq, e.sum.MHLFiles = w.Path, w.Seq, w.Files
}

// noteMHLNotWritten says in the summary (MHLError) why a run with --mhl
// that stopped before its end wrote no generation: a history records only
// a run that reached its end, and the summary of one stopped early by a
// full destination, a drive that went away, an interrupt (interrupted) or
// a fatal error (err) says the history lacks it, as one whose history
// could not be written does. The outcome stays the stop's.
func (rk *recordKeeper) noteMHLNotWritten(interrupted, err error) {
	e := rk.e
	if !e.opt.MHL || e.skipWrite() || e.sum.MHL != "" || e.sum.MHLError != "" || (interrupted == nil && err == nil) {
		return
	}
	const after = "a run stopped early writes none; "
	switch {
	case interrupted != nil:
		e.sum.MHLError = "interrupted: " + after + "rerun with --mhl to finish the copy and write it"
	case errors.As(err, new(*DestFullError)):
		e.sum.MHLError = "destination full: " + after + "make room and rerun with --mhl"
	case errors.As(err, new(*DriveGoneError)):
		e.sum.MHLError = "a drive went away: " + after + "reconnect it and rerun with --mhl"
	default:
		e.sum.MHLError = "the run stopped with an error: " + after + "fix the cause and rerun with --mhl"
	}
}
