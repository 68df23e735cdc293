package copyengine

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// A directory the run creates is made under a hidden name (its temporary
// name, ".NAME.fastcopy-tmp") and its files are written straight under
// their own names inside it. Once every file written there is verified and
// durable, or has failed and been removed, and the duplicates and further
// hard-link names that belong in it are placed (they are counted on the
// stage too), the directory is renamed onto its own name: one rename for the directory instead of one per file, which
// is about a sixth of the work of copying many small files. No file shows
// under its final path before it is complete, since the whole directory is
// out of sight until then.
//
// A subdirectory is staged on its own, inside its parent, so a directory
// is held back only for its own files. Only a directory whose files are
// few and small enough to be lost and copied again cheaply is kept staged
// (defaultStageMaxFiles, defaultStageMaxBytes, and no file of
// defaultResumeMin bytes or more,
// whose temporary an interrupted run keeps for the next to take up: see
// transfer.Resume): a run killed or a machine that loses
// power leaves a staged directory behind, and the next run removes it with
// everything in it, as it removes a temporary file. A larger directory is
// renamed into place as soon as it is listed, before any file is written
// in it, and its files take temporary names as usual. A run that stops
// (Ctrl-C, a fatal error) puts every staged directory in place once its
// workers have removed what they did not finish.
//
// A writer of the destination can rename or exchange the temporary name
// (renameat2 RENAME_EXCHANGE) at any moment, to have a directory of their
// choosing published under the final name, or to have the run's files
// written into it. The stage therefore remembers the directory it made, by
// device and inode, from a descriptor opened right after mkdir (and found
// empty and the process's own); every open of the directory, or of one
// below it, goes through a descriptor checked to be that directory
// (openDst), and the rename that publishes it is checked on both sides:
// the temporary name must hold it before, the final name after. What was
// placed in it is reported (counted, cached, listed as verified) only once
// it is published, and those of its subdirectories published inside it
// only once it is: a stage that cannot be put in place, or whose name was
// made to hold another directory, fails with one failure that names the
// directory and says how many files in it are not in place; nothing in it
// is counted as copied or verified, or recorded in the hash cache.

// defaultStageMaxFiles and defaultStageMaxBytes bound a directory kept
// staged while its files are written (tests lower them: hooks).
const (
	defaultStageMaxFiles = 10000
	defaultStageMaxBytes = int64(64 << 20)
)

// stage is a directory made under its temporary name.
type stage struct {
	sg     *stager
	rel    string // its own path, relative to the destination root
	tmp    string // its name in its parent until it is renamed
	ino    devIno // the directory made (see stageDir)
	open   atomic.Int64
	failed bool // could not be put in place (under stages.mu)
	// reports are what placing its files reported, held back until it is
	// published (under stages.mu); see report.
	reports []stageReport
}

// stageReport is one entry placed in a staged directory: what to report
// once the directory is published.
type stageReport struct {
	rel    string
	report func()
}

// stager is the stage that makes new destination directories under
// temporary names and puts each in place once its files are. It maps the
// path of each directory still under its temporary name to its stage.
// Directories are opened and renamed with mu held, so a path is never
// resolved across a rename.
type stager struct {
	e  *engine
	mu sync.Mutex
	m  map[string]*stage
}

// newStage records rel as made under tmp. The stage holds one reference
// for its listing, which walkDir settles when it has sent the files.
func (sg *stager) newStage(rel, tmp string, ino devIno) *stage {
	s := &stage{sg: sg, rel: rel, tmp: tmp, ino: ino}
	s.open.Store(1)
	sg.mu.Lock()
	if sg.m == nil {
		sg.m = map[string]*stage{}
	}
	sg.m[rel] = s
	sg.mu.Unlock()
	return s
}

// add counts one more file written under its own name in the directory.
func (s *stage) add() { s.open.Add(1) }

// settle is called once for each file counted by add (placed, failed or
// given up), and once when the listing is done; the last call puts the
// directory in place.
func (s *stage) settle() {
	if s != nil && s.open.Add(-1) == 0 {
		s.sg.publish(s)
	}
}

// actualRel is where rel is right now: its staged ancestors (and itself)
// under their temporary names. Call with staged.mu held.
func (sg *stager) actualRel(rel string) string {
	if len(sg.m) == 0 || rel == "" || rel == "." {
		return rel
	}
	parts := strings.Split(rel, "/")
	end := 0
	for i, part := range parts {
		end += len(part)
		if s, ok := sg.m[rel[:end]]; ok {
			parts[i] = s.tmp
		}
		end++ // the slash
	}
	return strings.Join(parts, "/")
}

// openDst opens the destination directory rel, wherever it is now: under
// its temporary name while it is staged, or its ancestors are, and after
// the run still there if it could not be put in place. (A directory keeps
// the path it was opened by for its messages, although it may be renamed
// since.)
func (sg *stager) openDst(rel string) (*fileio.Dir, error) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	return sg.openDstLocked(rel)
}

// errStageReplaced says a staged directory's name leads to another
// directory than the one the run made.
var errStageReplaced = errors.New("the directory the run made there was replaced by another (renamed or exchanged by another writer of the destination)")

// openDstLocked is openDst with staged.mu held. Below a staged directory
// the path is resolved from the nearest one's descriptor, checked to be
// the directory made: a path through a temporary name that another writer
// has made lead elsewhere is refused, not followed.
func (sg *stager) openDstLocked(rel string) (*fileio.Dir, error) {
	e := sg.e
	if len(sg.m) == 0 || rel == "" || rel == "." {
		return e.dstRoot.OpenBeneath(rel)
	}
	var s *stage
	end := -1 // where the path of s ends in rel
	for i := 0; i <= len(rel); i++ {
		if i == len(rel) || rel[i] == '/' {
			if st, ok := sg.m[rel[:i]]; ok {
				s, end = st, i
			}
		}
	}
	if s == nil {
		return e.dstRoot.OpenBeneath(rel)
	}
	sd, err := e.dstRoot.OpenBeneath(sg.actualRel(s.rel))
	if err != nil {
		return nil, err
	}
	if st, err := sd.Stat(); err != nil || (devIno{st.Dev, st.Ino}) != s.ino {
		sd.Close()
		if err == nil {
			err = fmt.Errorf("%q: %w", joinRel(stageParent(s.rel), s.tmp), errStageReplaced)
		}
		return nil, err
	}
	if end == len(rel) {
		return sd, nil
	}
	d, err := sd.OpenBeneath(rel[end+1:])
	sd.Close()
	return d, err
}

// report runs what placing rel reported (counts, events, the hash cache)
// once the staged directory s it is in is published: at once when s is
// nil or published already. Nothing is reported for an entry of a stage
// that failed already: it is not in place, and the stage's failure says so.
func (sg *stager) report(s *stage, rel string, f func()) {
	e := sg.e
	if s != nil {
		sg.mu.Lock()
		if sg.m[s.rel] == s {
			if s.failed {
				e.stats.FilesDone.Add(1)
			} else {
				s.reports = append(s.reports, stageReport{rel, f})
			}
			sg.mu.Unlock()
			return
		}
		sg.mu.Unlock()
	}
	f()
}

// stageParent is the directory rel is in ("" for the root).
func stageParent(rel string) string {
	dir, _ := splitRel(rel)
	return dir
}

// nearestStage is the staged directory rel is in, nil if none (staged.mu
// held).
func (sg *stager) nearestStage(rel string) *stage {
	for rel != "" {
		rel = stageParent(rel)
		if s, ok := sg.m[rel]; ok {
			return s
		}
	}
	return nil
}

// publish renames a staged directory onto its own name. A directory that
// cannot be put in place (its name was taken while it was written) stays
// hidden, the next run removes it, and the failure names it.
//
// The rename is checked on both sides: the temporary name must lead to the
// directory made before it, and the final name after it. A directory whose
// name was made to lead elsewhere fails: whatever the final name holds
// then is not the run's, and what was placed in the run's directory is not
// in place.
func (sg *stager) publish(s *stage) {
	e := sg.e
	var reports []stageReport
	defer func() {
		for _, r := range reports {
			r.report()
		}
	}()
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.m[s.rel] != s || s.failed {
		return // put in place already, or left for the next run
	}
	parent, name := path.Split(s.rel)
	parent = strings.TrimSuffix(parent, "/")
	pd, err := sg.openDstLocked(parent)
	if err == nil {
		err = renameStage(pd, s, name)
		pd.Close()
	}
	if err != nil {
		// Left under its temporary name (and its subdirectories found
		// there) for the next run to remove.
		s.failed = true
		msg := fmt.Sprintf("moving the finished directory into place from %q: %v; remove what is in the way and rerun", joinRel(parent, s.tmp), err)
		if errors.Is(err, errStageReplaced) {
			msg = fmt.Sprintf("%v; nothing the run placed in it is in place: check %q and rerun", err, s.rel)
		}
		if n := len(s.reports); n > 0 {
			msg += fmt.Sprintf(" (%d files in it are not in place)", n)
			e.stats.FilesDone.Add(int64(n))
		}
		s.reports = nil
		if errors.Is(err, errStageReplaced) {
			// Not the directory written and verified: exit 4.
			e.fail(s.rel, &MismatchError{Path: s.rel, Cause: msg})
		} else {
			e.fail(s.rel, errors.New(msg))
		}
		return
	}
	delete(sg.m, s.rel)
	if up := sg.nearestStage(s.rel); up != nil {
		// In place only once the directory it is in is.
		up.reports = append(up.reports, s.reports...)
	} else {
		reports = s.reports
	}
	s.reports = nil
}

// renameStage renames s's directory (s.tmp in pd) onto name, checking that
// the temporary name holds the directory made before and that name holds
// it after.
func renameStage(pd *fileio.Dir, s *stage, name string) error {
	if st, err := pd.Lstat(s.tmp); err != nil {
		return err
	} else if (devIno{st.Dev, st.Ino}) != s.ino {
		return fmt.Errorf("%q: %w", pd.Path()+"/"+s.tmp, errStageReplaced)
	}
	if err := fileio.RenameDirNoReplace(pd, s.tmp, name); err != nil { // never onto a directory made meanwhile
		return err
	}
	if st, err := pd.Lstat(name); err != nil || (devIno{st.Dev, st.Ino}) != s.ino {
		return fmt.Errorf("%q, once renamed: %w", pd.Path()+"/"+name, errStageReplaced)
	}
	return nil
}

// spoil keeps s out of sight for good: something in it that did not copy
// could not be removed, and would otherwise show under its final path.
func (sg *stager) spoil(s *stage, err error) {
	e := sg.e
	sg.mu.Lock()
	s.failed = true
	sg.mu.Unlock()
	e.fail(s.rel, fmt.Errorf("%w; the directory stays under its temporary name %q, which the next run removes", err, s.tmp))
}

// unwrite removes a file that will not be put in place (tmp in d). In a
// staged directory, where it has its own name, one that cannot be removed
// keeps the whole directory out of sight.
func (sg *stager) unwrite(s *stage, d *fileio.Dir, tmp string) {
	err := d.Remove(tmp)
	if s != nil && err != nil && !fileio.IsNotExist(err) {
		sg.spoil(s, fmt.Errorf("could not remove %q, which did not copy: %w", tmp, err))
	}
}

// stillStaged reports whether rel is in a directory that is still under
// its temporary name; after publishAll, one that could not be put in place.
func (sg *stager) stillStaged(rel string) bool {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	return sg.actualRel(rel) != rel
}

// publishAll puts every directory still staged in place, parents first,
// once the copy has stopped: whatever is in them then is complete.
func (sg *stager) publishAll() {
	sg.mu.Lock()
	left := make([]*stage, 0, len(sg.m))
	for _, s := range sg.m {
		left = append(left, s)
	}
	sg.mu.Unlock()
	sort.Slice(left, func(i, j int) bool { return left[i].rel < left[j].rel })
	for _, s := range left {
		sg.publish(s)
	}
}

// stageable reports whether a directory holding files (its non-directory
// entries) is kept staged while they are written.
func (h *hooks) stageable(files []entry) bool {
	n, bytes := 0, int64(0)
	for i := range files {
		if files[i].st.IsRegular() {
			if files[i].st.Size >= h.resumeMinSize() {
				return false // its temporary is kept for a rerun to take up (see transfer.Resume)
			}
			n++
			bytes += files[i].st.Size
		}
	}
	maxFiles, maxBytes := h.stageLimits()
	return n <= maxFiles && bytes <= maxBytes
}

// removeTree removes the directory name in d and everything below it,
// following no symlink: a staged directory left by an interrupted run.
func removeTree(d *fileio.Dir, name string) error {
	sub, err := d.OpenSub(name)
	if err != nil {
		return err
	}
	_ = sub.AsFile().Chmod(0o700) // one left read-only (by a source that is) must still be emptied
	names, err := sub.ReadDir()
	for _, n := range names {
		if n.Type == fileio.ModeDir {
			_ = removeTree(sub, n.Name)
		} else {
			_ = sub.Remove(n.Name)
		}
	}
	sub.Close()
	if err != nil {
		return err
	}
	return d.RemoveDir(name)
}

// stageDir makes the new destination directory rel (name in parent) under
// its temporary name tmp and returns its stage, or nil where directories are
// not staged or tmp cannot be made: then it is made under its own name.
//
// The stage remembers the directory made by its inode, taken from a
// descriptor opened right after mkdir, which must be a directory of this
// process's owner with nothing in it: another writer of the destination
// who swapped the name in that moment could put there only an empty
// directory of their own owner (which fails it here), or one of ours that
// is empty. ok is false when it failed.
func (sg *stager) stageDir(parent *fileio.Dir, rel, tmp string) (s *stage, ok bool) {
	e := sg.e
	if !fileio.CanStageDirs || e.skipWrite() || !sg.dirRenameKeeps(parent) {
		return nil, true
	}
	e.made.Before(stageParent(rel), tmp, true)
	if err := parent.Mkdir(tmp, 0o700); err != nil {
		e.made.After(parent, stageParent(rel), tmp, nil, err)
		return nil, true
	}
	e.made.After(parent, stageParent(rel), tmp, nil, nil)
	e.count(func(s *Summary) { s.Dirs++ })
	e.event(ActMkdir, rel)
	sd, err := parent.OpenSub(tmp)
	if err != nil {
		e.fail(rel, err)
		return nil, false
	}
	defer sd.Close()
	st, err := sd.Stat()
	if err == nil && (!st.IsDir() || !fileio.OwnedBy(&st, e.euid)) {
		err = fmt.Errorf("%q: %w", joinRel(stageParent(rel), tmp), errStageReplaced)
	}
	if err == nil {
		if names, rerr := sd.ReadDir(); rerr != nil {
			err = rerr
		} else if len(names) > 0 {
			err = fmt.Errorf("%q: %w", joinRel(stageParent(rel), tmp), errStageReplaced)
		}
	}
	if errors.Is(err, errStageReplaced) {
		e.fail(rel, &MismatchError{Path: rel, Cause: err.Error()})
		return nil, false
	} else if err != nil {
		e.fail(rel, err)
		return nil, false
	}
	return sg.newStage(rel, tmp, devIno{st.Dev, st.Ino}), true
}
