package copyengine

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/mhl"
)

// mhlFolder is the folder below a history's root that holds its ASC MHL
// history (generation files and ascmhl_chain.xml).
const mhlFolder = "ascmhl"

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
func (e *engine) checkMHLPlan(p *plan) error {
	if !e.opt.MHL {
		return nil
	}
	if p.ontoFile {
		return refuse(e.opt.Dest, "--mhl records a folder's history, and this copies a file onto the name "+quote(e.opt.Dest), "copy into a directory: fastcopy --mhl FILE DIR/")
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
func isMHLFolder(name string) bool { return strings.EqualFold(name, mhlFolder) }

// leaveOutSourceMHL says whether the walk leaves out the entry name of the
// source directory copied onto the destination root: with --mhl, a
// source's own ascmhl folder (a card offloaded before) is not copied as
// data onto DEST's, whose chain it would replace. The run says so once.
func (e *engine) leaveOutSourceMHL(srcDir, dstRel, name string) bool {
	if !e.opt.MHL || dstRel != "" || !isMHLFolder(name) {
		return false
	}
	note := fmt.Sprintf("%q is the source's own ASC MHL history: not copied; %q keeps its own history, which this run extends", filepath.Join(srcDir, name), filepath.Join(e.dstRootPath, mhlFolder))
	e.mu.Lock()
	e.sum.MHLNotes = append(e.sum.MHLNotes, note)
	e.mu.Unlock()
	return true
}

// writeMHL records the run as the next generation of DEST's ASC MHL
// history, once its files are placed and flushed and while it holds DEST's
// lock. The generation lists each file the run put or found in place, with
// the digest the run has for it: for a copy, the source's, which its
// read-back matched (with --verify=off, the one taken while the source was
// read); for a file found unchanged, the one both sides were found to hold
// (read, or from the hash cache's valid entries). Nothing is hashed again.
// Files that failed are not listed. The action of each entry follows from
// the history (internal/mhl): original for the first digest of a path,
// then verified or failed.
//
// Sizes and modification times are the destination files' as they are
// now. A failure is kept in the summary (MHLError) and in e.mhlErr.
func (e *engine) writeMHL() {
	if !e.opt.MHL || e.opt.DryRun || e.dstRoot == nil {
		return
	}
	err := e.writeGeneration()
	if err != nil {
		e.mhlErr = &MHLError{Dest: e.dstRootPath, Err: err}
		e.sum.MHLError = ErrText(err)
	}
}

// noteMHLNotWritten says in the summary (MHLError) why a run with --mhl
// that stopped before its end wrote no generation: a history records only
// a run that reached its end, and the summary of one stopped early by a
// full destination, a drive that went away, an interrupt (interrupted) or
// a fatal error (err) says the history lacks it, as one whose history
// could not be written does. The outcome stays the stop's.
func (e *engine) noteMHLNotWritten(interrupted, err error) {
	if !e.opt.MHL || e.opt.DryRun || e.sum.MHL != "" || e.sum.MHLError != "" || (interrupted == nil && err == nil) {
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

func (e *engine) writeGeneration() error {
	files, err := e.mhlFiles()
	if err != nil {
		return err
	}
	var dirs []mhl.Dir
	for _, dm := range e.commit.walkedDirs() {
		if dm.dstRel != "" {
			dirs = append(dirs, mhl.Dir{Path: dm.dstRel})
		}
	}
	ng := &mhl.NewGeneration{
		Creator: mhl.Creator{ToolVersion: e.opt.MHLToolVersion},
		Formats: e.opt.mhlFormatNames(),
		Process: mhl.Transfer,
		Files:   files,
		Dirs:    dirs,
	}
	if e.opt.Verify == VerifyOff {
		ng.Creator.Comment = "copied with --verify=off: the digests are the sources' as read; the copies were not read back"
	}
	// The history goes into the directory the run holds; its path must
	// still lead there for the paths reported to name it.
	if err := e.sameDestPath(); err != nil {
		return err
	}
	w, err := mhl.WriteGenerationIn(e.dstRoot, e.dstRootPath, ng)
	if err != nil {
		return err
	}
	e.sum.MHL, e.sum.MHLSeq, e.sum.MHLFiles = w.Path, w.Seq, len(files)
	return nil
}

// sameDestPath checks that DEST's path, through which the history is
// written, still leads to the directory this run copied into and locked.
func (e *engine) sameDestPath() error {
	at, err := fileio.OpenDir(e.dstRootPath)
	if err != nil {
		return err
	}
	st, err1 := at.Stat()
	at.Close()
	own, err2 := e.dstRoot.Stat()
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if st.Dev != own.Dev || st.Ino != own.Ino {
		return fmt.Errorf("%q is no longer the directory the run copied into", e.dstRootPath)
	}
	return nil
}

// mhlFiles is the generation's files: each path the run recorded a digest
// for (the last one, should a path be recorded twice), with its size and
// modification time as DEST holds it now. A path no longer a regular file
// there is an error: something else changed DEST under the run's lock.
func (e *engine) mhlFiles() ([]mhl.File, error) {
	e.mu.Lock()
	sums := make(map[string]listed, len(e.manifest))
	for _, m := range e.manifest {
		sums[m.path] = m
	}
	e.mu.Unlock()
	byDir := map[string][]string{}
	for rel := range sums {
		dir, name := path.Split(rel)
		dir = strings.TrimSuffix(dir, "/")
		byDir[dir] = append(byDir[dir], name)
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)                      // the first error found is the same each time
	files := make([]mhl.File, 0, len(sums)) // the generation sorts them
	for _, dir := range dirs {
		var err error
		if files, err = e.statListed(files, dir, byDir[dir], sums); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// statListed appends to files the names in the directory dir of DEST,
// each with its digest from sums and its size and modification time as
// DEST holds it now.
func (e *engine) statListed(files []mhl.File, dir string, names []string, sums map[string]listed) ([]mhl.File, error) {
	d := e.dstRoot
	if dir != "" {
		var err error
		if d, err = e.dstRoot.OpenBeneath(dir); err != nil {
			return nil, err
		}
		defer d.Close()
	}
	for _, name := range names {
		rel := joinRel(dir, name)
		st, err := d.Lstat(name)
		if err == nil && !st.IsRegular() {
			err = fmt.Errorf("%q is no longer a regular file", rel)
		}
		if err != nil {
			return nil, err
		}
		l := sums[rel]
		f := mhl.File{Path: rel, Size: st.Size, ModTime: time.Unix(0, st.Mtime), Sum: l.sum}
		for _, format := range e.opt.mhlFormatNames() {
			if format == xxh128 {
				continue
			}
			d, ok := l.digestOf(format)
			if !ok {
				return nil, fmt.Errorf("%q: %w", rel, errNoDigest(format))
			}
			if f.Extra == nil {
				f.Extra = map[string]string{}
			}
			f.Extra[format] = d
		}
		files = append(files, f)
	}
	return files, nil
}
