package records

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/mhl"
)

// MHLFolder is the folder below a history's root that holds its ASC MHL
// history (generation files and ascmhl_chain.xml).
const MHLFolder = "ascmhl"

// IsMHLFolder says whether the name at a history's root is its ascmhl
// folder, in any case (a destination that folds names holds one).
func IsMHLFolder(name string) bool { return strings.EqualFold(name, MHLFolder) }

// MHLFormats are the formats an ASC MHL generation may record (the
// specification's, less none).
var MHLFormats = []string{"xxh128", "xxh64", "xxh3", "md5", "sha1", "c4"}

// IsMHLFormat says whether name is one of MHLFormats, in any case.
func IsMHLFormat(name string) bool {
	for _, f := range MHLFormats {
		if strings.EqualFold(f, strings.TrimSpace(name)) {
			return true
		}
	}
	return false
}

// MHL is the history a run records itself in (--mhl): the next
// generation of the ASC MHL history of the directory Root, which the run
// holds (locked) and whose path is RootPath.
type MHL struct {
	Root     *fileio.Dir
	RootPath string
	Formats  []string // the generation's formats, in the order given
	// Dirs are the directories below Root the run made or went through.
	Dirs        []string
	ToolVersion string
	VerifyOff   bool // the copies were not read back: the generation says so
}

// Written is a generation written: its file, its number and how many
// files it lists.
type Written struct {
	Path  string
	Seq   int
	Files int
}

// Write records the files of s as the next generation of the history,
// once they are placed and flushed. The generation lists each file with
// the digest the run has for it (the last one, should a path be listed
// twice): nothing is hashed again. Sizes and modification times are the
// destination files' as they are now; a path no longer a regular file
// there is an error (something else changed DEST under the run's lock),
// as is one without a digest in one of Formats. The action of each entry
// follows from the history (internal/mhl): original for the first digest
// of a path, then verified or failed.
func (m *MHL) Write(s *Set) (Written, error) {
	files, err := m.files(s)
	if err != nil {
		return Written{}, err
	}
	var dirs []mhl.Dir
	for _, d := range m.Dirs {
		if d != "" {
			dirs = append(dirs, mhl.Dir{Path: d})
		}
	}
	ng := &mhl.NewGeneration{
		Creator: mhl.Creator{ToolVersion: m.ToolVersion},
		Formats: m.Formats,
		Process: mhl.Transfer,
		Files:   files,
		Dirs:    dirs,
	}
	if m.VerifyOff {
		ng.Creator.Comment = "copied with --verify=off: the digests are the sources' as read; the copies were not read back"
	}
	// The history goes into the directory the run holds; its path must
	// still lead there for the paths reported to name it.
	if err := SameDir(m.RootPath, m.Root, "the directory the run copied into"); err != nil {
		return Written{}, err
	}
	w, err := mhl.WriteGenerationIn(m.Root, m.RootPath, ng)
	if err != nil {
		return Written{}, err
	}
	return Written{Path: w.Path, Seq: w.Seq, Files: len(files)}, nil
}

// SameDir checks that path still leads to the directory d, which is what
// (for the message).
func SameDir(path string, d *fileio.Dir, what string) error {
	at, err := fileio.OpenDir(path)
	if err != nil {
		return err
	}
	st, err1 := at.Stat()
	at.Close()
	own, err2 := d.Stat()
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if st.Dev != own.Dev || st.Ino != own.Ino {
		return fmt.Errorf("%q is no longer %s", path, what)
	}
	return nil
}

// files is the generation's files: each path listed in s, with its size
// and modification time as Root holds it now.
func (m *MHL) files(s *Set) ([]mhl.File, error) {
	sums := s.last()
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
		if files, err = m.statListed(files, dir, byDir[dir], sums); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// statListed appends to files the names in the directory dir of Root,
// each with its digests from sums and its size and modification time as
// Root holds it now.
func (m *MHL) statListed(files []mhl.File, dir string, names []string, sums map[string]Listed) ([]mhl.File, error) {
	d := m.Root
	if dir != "" {
		var err error
		if d, err = m.Root.OpenBeneath(dir); err != nil {
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
		f := mhl.File{Path: rel, Size: st.Size, ModTime: time.Unix(0, st.Mtime), Sum: l.Sum}
		for _, format := range m.Formats {
			if format == XXH128 {
				continue
			}
			d, ok := l.Digest(format)
			if !ok {
				return nil, fmt.Errorf("%q: %w", rel, ErrNoDigest(format))
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

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
