package staging

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
)

// Config is a Stager's whole input.
type Config struct {
	Root *fileio.Dir  // the destination root: every path is relative to it
	Made *made.Record // what runs made in the destination root: a stage is noted there before it is made
	Euid int          // the process's user, who must own a directory made
}

// ErrReplaced says a staged directory's name leads to another directory
// than the one the run made.
var ErrReplaced = errors.New("the directory the run made there was replaced by another (renamed or exchanged by another writer of the destination)")

// devIno is a directory's identity.
type devIno struct{ dev, ino uint64 }

// Stage is a directory made under its temporary name.
type Stage struct {
	rel    string // its own path, relative to the destination root
	tmp    string // its name in its parent until it is renamed
	ino    devIno // the directory made (see Adopt)
	failed bool   // could not be put in place (under Stager.mu)
	// reports are what placing its files reported, held back until it is
	// published (under Stager.mu); see Report.
	reports []func()
}

// Rel is the stage's own path, relative to the destination root.
func (s *Stage) Rel() string { return s.rel }

// Tmp is its temporary name in its parent.
func (s *Stage) Tmp() string { return s.tmp }

// Stager makes new destination directories under temporary names and puts
// each in place once its files are. It maps the path of each directory
// still under its temporary name to its stage. Directories are opened and
// renamed with mu held, so a path is never resolved across a rename.
type Stager struct {
	cfg Config
	mu  sync.Mutex
	m   map[string]*Stage
}

// New is a Stager of the destination cfg describes.
func New(cfg Config) *Stager { return &Stager{cfg: cfg} }

// ParentOf is the directory rel is in ("" for the root).
func ParentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Mkdir makes the new destination directory rel (its name in parent)
// under its temporary name tmp, noted first in the record of what runs
// made. False when tmp cannot be made: then it is made under its own
// name.
func (sg *Stager) Mkdir(parent *fileio.Dir, rel, tmp string) bool {
	m := sg.cfg.Made
	m.Before(ParentOf(rel), tmp, true)
	err := parent.Mkdir(tmp, 0o700)
	m.After(parent, ParentOf(rel), tmp, nil, err)
	return err == nil
}

// Adopt opens the directory Mkdir made (tmp in parent) and returns its
// stage, its path rel.
//
// The stage remembers the directory made by its inode, taken from a
// descriptor opened right after mkdir, which must be a directory of this
// process's owner with nothing in it: another writer of the destination
// who swapped the name in that moment could put there only an empty
// directory of their own owner (which fails it here, with ErrReplaced),
// or one of ours that is empty.
func (sg *Stager) Adopt(parent *fileio.Dir, rel, tmp string) (*Stage, error) {
	sd, err := parent.OpenSub(tmp)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	st, err := sd.Stat()
	if err == nil && (!st.IsDir() || !fileio.OwnedBy(&st, sg.cfg.Euid)) {
		err = fmt.Errorf("%q: %w", joinRel(ParentOf(rel), tmp), ErrReplaced)
	}
	if err == nil {
		if names, rerr := sd.ReadDir(); rerr != nil {
			err = rerr
		} else if len(names) > 0 {
			err = fmt.Errorf("%q: %w", joinRel(ParentOf(rel), tmp), ErrReplaced)
		}
	}
	if err != nil {
		return nil, err
	}
	s := &Stage{rel: rel, tmp: tmp, ino: devIno{st.Dev, st.Ino}}
	sg.mu.Lock()
	if sg.m == nil {
		sg.m = map[string]*Stage{}
	}
	sg.m[rel] = s
	sg.mu.Unlock()
	return s, nil
}

// actualRel is where rel is right now: its staged ancestors (and itself)
// under their temporary names. Call with mu held.
func (sg *Stager) actualRel(rel string) string {
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

// OpenDir opens the destination directory rel, wherever it is now: under
// its temporary name while it is staged, or its ancestors are, and after
// the run still there if it could not be put in place. (A directory keeps
// the path it was opened by for its messages, although it may be renamed
// since.)
func (sg *Stager) OpenDir(rel string) (*fileio.Dir, error) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	return sg.openLocked(rel)
}

// openLocked is OpenDir with mu held. Below a staged directory the path
// is resolved from the nearest one's descriptor, checked to be the
// directory made: a path through a temporary name that another writer has
// made lead elsewhere is refused, not followed.
func (sg *Stager) openLocked(rel string) (*fileio.Dir, error) {
	root := sg.cfg.Root
	if len(sg.m) == 0 || rel == "" || rel == "." {
		return root.OpenBeneath(rel)
	}
	var s *Stage
	end := -1 // where the path of s ends in rel
	for i := 0; i <= len(rel); i++ {
		if i == len(rel) || rel[i] == '/' {
			if st, ok := sg.m[rel[:i]]; ok {
				s, end = st, i
			}
		}
	}
	if s == nil {
		return root.OpenBeneath(rel)
	}
	sd, err := root.OpenBeneath(sg.actualRel(s.rel))
	if err != nil {
		return nil, err
	}
	if st, err := sd.Stat(); err != nil || (devIno{st.Dev, st.Ino}) != s.ino {
		sd.Close()
		if err == nil {
			err = fmt.Errorf("%q: %w", joinRel(ParentOf(s.rel), s.tmp), ErrReplaced)
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

// Report runs f, what placing an entry reported (counts, events, the hash
// cache), once the staged directory s it is in is published: at once when
// s is nil or published already. Nothing is reported for an entry of a
// stage that failed already: it is not in place, and the stage's failure
// says so; Report then returns false.
func (sg *Stager) Report(s *Stage, f func()) bool {
	if s != nil {
		sg.mu.Lock()
		if sg.m[s.rel] == s {
			failed := s.failed
			if !failed {
				s.reports = append(s.reports, f)
			}
			sg.mu.Unlock()
			return !failed
		}
		sg.mu.Unlock()
	}
	f()
	return true
}

// nearest is the staged directory rel is in, nil if none (mu held).
func (sg *Stager) nearest(rel string) *Stage {
	for rel != "" {
		rel = ParentOf(rel)
		if s, ok := sg.m[rel]; ok {
			return s
		}
	}
	return nil
}
