package staging

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// PublishError is a stage that could not be put in place: it stays under
// its temporary name (with its subdirectories found there) for the next
// run to remove. Replaced says its name was made to lead to another
// directory (errors.Is(err, ErrReplaced)): not the directory written and
// verified.
type PublishError struct {
	Rel      string // the directory's own path
	Replaced bool
	Lost     int // the files placed in it, which are not in place
	msg      string
}

func (e *PublishError) Error() string { return e.msg }

// Publish renames a staged directory onto its own name and runs what its
// entries reported (Report), or passes it on to the staged directory it
// is in. A directory that cannot be put in place (its name was taken
// while it was written) stays hidden, the next run removes it, and the
// *PublishError names it. A stage published already, or failed, is left
// as it is.
//
// The rename is checked on both sides: the temporary name must lead to the
// directory made before it, and the final name after it. A directory whose
// name was made to lead elsewhere fails: whatever the final name holds
// then is not the run's, and what was placed in the run's directory is not
// in place.
func (sg *Stager) Publish(s *Stage) error {
	var reports []func()
	defer func() {
		for _, r := range reports {
			r()
		}
	}()
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.m[s.rel] != s || s.failed {
		return nil // put in place already, or left for the next run
	}
	parent, name := path.Split(s.rel)
	parent = strings.TrimSuffix(parent, "/")
	pd, err := sg.openLocked(parent)
	if err == nil {
		err = rename(pd, s, name)
		pd.Close()
	}
	if err != nil {
		return s.fail(parent, err)
	}
	delete(sg.m, s.rel)
	if up := sg.nearest(s.rel); up != nil {
		// In place only once the directory it is in is.
		up.reports = append(up.reports, s.reports...)
	} else {
		reports = s.reports
	}
	s.reports = nil
	return nil
}

// fail marks s as not put in place (err the rename's) and says why (mu
// held).
func (s *Stage) fail(parent string, err error) *PublishError {
	s.failed = true
	pe := &PublishError{Rel: s.rel, Replaced: errors.Is(err, ErrReplaced), Lost: len(s.reports)}
	pe.msg = fmt.Sprintf("moving the finished directory into place from %q: %v; remove what is in the way and rerun", joinRel(parent, s.tmp), err)
	if pe.Replaced {
		pe.msg = fmt.Sprintf("%v; nothing the run placed in it is in place: check %q and rerun", err, s.rel)
	}
	if pe.Lost > 0 {
		pe.msg += fmt.Sprintf(" (%d files in it are not in place)", pe.Lost)
	}
	s.reports = nil
	return pe
}

// rename renames s's directory (s.tmp in pd) onto name, checking that the
// temporary name holds the directory made before and that name holds it
// after.
func rename(pd *fileio.Dir, s *Stage, name string) error {
	if st, err := pd.Lstat(s.tmp); err != nil {
		return err
	} else if (devIno{st.Dev, st.Ino}) != s.ino {
		return fmt.Errorf("%q: %w", pd.Path()+"/"+s.tmp, ErrReplaced)
	}
	if err := fileio.RenameDirNoReplace(pd, s.tmp, name); err != nil { // never onto a directory made meanwhile
		return err
	}
	if st, err := pd.Lstat(name); err != nil || (devIno{st.Dev, st.Ino}) != s.ino {
		return fmt.Errorf("%q, once renamed: %w", pd.Path()+"/"+name, ErrReplaced)
	}
	return nil
}

// Spoil keeps s out of sight for good: something in it that did not copy
// (err says what) could not be removed, and would otherwise show under
// its final path. It returns the stage's failure.
func (sg *Stager) Spoil(s *Stage, err error) error {
	sg.mu.Lock()
	s.failed = true
	sg.mu.Unlock()
	return fmt.Errorf("%w; the directory stays under its temporary name %q, which the next run removes", err, s.tmp)
}

// Staged reports whether rel is in a directory that is still under its
// temporary name; once every stage was published, one that could not be
// put in place.
func (sg *Stager) Staged(rel string) bool {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	return sg.actualRel(rel) != rel
}

// Left is every directory still staged, parents first: once the copy has
// stopped, whatever is in them is complete, and each is to be published.
func (sg *Stager) Left() []*Stage {
	sg.mu.Lock()
	left := make([]*Stage, 0, len(sg.m))
	for _, s := range sg.m {
		left = append(left, s)
	}
	sg.mu.Unlock()
	sort.Slice(left, func(i, j int) bool { return left[i].rel < left[j].rel })
	return left
}

// RemoveTree removes the directory name in d and everything below it,
// following no symlink: a staged directory left by an interrupted run.
func RemoveTree(d *fileio.Dir, name string) error {
	sub, err := d.OpenSub(name)
	if err != nil {
		return err
	}
	_ = sub.AsFile().Chmod(0o700) // one left read-only (by a source that is) must still be emptied
	names, err := sub.ReadDir()
	for _, n := range names {
		if n.Type == fileio.ModeDir {
			_ = RemoveTree(sub, n.Name)
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
