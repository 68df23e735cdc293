package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Config is the request a plan is made for: the arguments as the user
// gave them.
type Config struct {
	Sources []string // SOURCE arguments: files or directories
	Dest    string   // DEST
}

// Root is one SOURCE argument mapped onto the destination.
type Root struct {
	Src    string // the source path as given (cleaned)
	IsDir  bool
	SrcDir string // the directory walked (IsDir) or holding the file
	Name   string // for a file: its name in SrcDir
	DstRel string // where it lands, relative to the destination root
}

// Plan is what a run decided from the arguments before writing anything.
type Plan struct {
	DstRoot string // an existing (or to be created) directory
	Create  bool   // DstRoot must be created
	// OntoFile: one file SOURCE copied onto the file name DEST (DstRoot
	// is the directory that holds it).
	OntoFile bool
	Roots    []Root
}

// Make applies the argument rules and refuses bad requests up front
// (refusal.Error):
//
//   - one directory SOURCE: DEST becomes its copy (created if missing,
//     brought up to date if it exists);
//   - one file SOURCE: DEST/basename if DEST is a directory, DEST otherwise;
//   - several SOURCEs: each lands as DEST/basename; DEST must be a directory.
func Make(cfg Config) (*Plan, error) {
	sources, dest := cfg.Sources, cfg.Dest
	if len(sources) == 0 {
		return nil, refusal.New("", "no SOURCE given", "name at least one file or directory to copy")
	}
	if dest == "" {
		return nil, refusal.New("", "no DEST given", "name the destination")
	}
	srcs, err := statSources(sources)
	if err != nil {
		return nil, err
	}
	dst, err := ArgPath(dest)
	if err != nil {
		return nil, err
	}
	dstSt, dstErr := os.Stat(dst)
	if dstErr != nil && !errors.Is(dstErr, os.ErrNotExist) {
		return nil, refusal.New(dest, "cannot read destination: "+refusal.Text(dstErr), "check the path and its permissions")
	}
	if dstErr != nil {
		dstSt = nil
	}
	if len(srcs) == 1 {
		return planOne(srcs[0], dest, dst, dstSt)
	}
	return planMany(srcs, dest, dst, dstSt)
}

// srcArg is a SOURCE as given, checked.
type srcArg struct {
	path  string // as the kernel resolves it (argPath)
	given string // as the user spelled it
	isDir bool
}

// statSources checks each SOURCE is a file or a directory that can be read.
func statSources(sources []string) ([]srcArg, error) {
	var srcs []srcArg
	for _, s := range sources {
		st, err := os.Stat(s) // symlinks named on the command line are followed
		if err != nil {
			if _, lerr := os.Lstat(s); lerr == nil {
				return nil, refusal.New(s, "is a symlink whose target does not exist", "name the target, or copy its directory")
			}
			return nil, refusal.New(s, "source does not exist or cannot be read: "+refusal.Text(err), "check the path")
		}
		if !st.IsDir() && !st.Mode().IsRegular() {
			// Special files are copied inside trees; as a SOURCE they are
			// almost always a mistake (a device to read?).
			return nil, refusal.New(s, "source is not a regular file or directory", "copy the directory that holds it")
		}
		path, err := ArgPath(s)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, srcArg{path: path, given: s, isDir: st.IsDir()})
	}
	return srcs, nil
}

// planOne plans a single SOURCE s; dstSt is DEST's stat, nil when it does
// not exist.
func planOne(s srcArg, dest, dst string, dstSt os.FileInfo) (*Plan, error) {
	dstExists := dstSt != nil
	p := &Plan{}
	switch {
	case s.isDir:
		if dstExists && !dstSt.IsDir() {
			return nil, refusal.New(dest, "destination exists and is not a directory, but SOURCE is one", "name a directory, or remove the file first")
		}
		if err := checkNotInside(s.path, dst); err != nil {
			return nil, err
		}
		p.DstRoot, p.Create = dst, !dstExists
		p.Roots = []Root{{Src: s.path, IsDir: true, SrcDir: s.path, DstRel: ""}}
	case dstExists && dstSt.IsDir():
		if err := checkNotSame(s.path, filepath.Join(dst, filepath.Base(s.path))); err != nil {
			return nil, err
		}
		p.DstRoot = dst
		p.Roots = []Root{fileRoot(s.path, filepath.Base(s.path))}
	default:
		if strings.HasSuffix(dest, "/") {
			return nil, refusal.New(dest, "destination directory does not exist", "create it first, or leave off the final slash to copy onto that name")
		}
		if err := checkNotSame(s.path, dst); err != nil {
			return nil, err
		}
		p.DstRoot = filepath.Dir(dst)
		if _, err := os.Stat(p.DstRoot); err != nil {
			p.Create = true
		}
		p.Roots = []Root{fileRoot(s.path, filepath.Base(dst))}
		p.OntoFile = true
	}
	return p, nil
}

// planMany plans several SOURCEs, each copied as DEST/its base name.
func planMany(srcs []srcArg, dest, dst string, dstSt os.FileInfo) (*Plan, error) {
	if dstSt == nil || !dstSt.IsDir() {
		return nil, refusal.New(dest, "several sources need an existing destination directory", "create the directory first")
	}
	p := &Plan{}
	seen := map[string]string{}
	for _, s := range srcs {
		base := filepath.Base(s.path)
		if b := filepath.Base(filepath.Clean(s.given)); b == "." || b == ".." || base == "." || base == ".." || base == string(filepath.Separator) {
			// DEST/. is DEST itself and DEST/.. lies outside it.
			return nil, refusal.New(filepath.Clean(s.given), "has no name of its own to give its copy in "+quote(dest), "name the directory by its path (for example ../NAME), or copy it on its own: fastcopy SOURCE DEST/NAME")
		}
		if prev, ok := seen[base]; ok {
			return nil, refusal.New(s.path, "has the same name as "+quote(prev)+": both would land on "+quote(filepath.Join(dst, base)), "copy them in separate runs into different directories")
		}
		seen[base] = s.path
		if s.isDir {
			if err := checkNotInside(s.path, filepath.Join(dst, base)); err != nil {
				return nil, err
			}
			if st, err := os.Lstat(filepath.Join(dst, base)); err == nil && !st.IsDir() {
				return nil, refusal.New(filepath.Join(dst, base), "exists and is not a directory, but "+quote(s.path)+" is one", "remove it or copy elsewhere")
			}
			p.Roots = append(p.Roots, Root{Src: s.path, IsDir: true, SrcDir: s.path, DstRel: base})
		} else {
			if err := checkNotSame(s.path, filepath.Join(dst, base)); err != nil {
				return nil, err
			}
			p.Roots = append(p.Roots, fileRoot(s.path, base))
		}
	}
	p.DstRoot = dst
	return p, nil
}

// fileRoot maps the file SOURCE src onto dstName. A symlink named on the
// command line is followed (statSources): the file it leads to is read,
// by its own name in its own directory, since every source is opened
// without following a symlink; its copy keeps the name the link gave it.
func fileRoot(src, dstName string) Root {
	at := src
	if st, err := os.Lstat(src); err == nil && st.Mode()&os.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(src); err == nil {
			at = target
		}
	}
	return Root{Src: src, SrcDir: filepath.Dir(at), Name: filepath.Base(at), DstRel: dstName}
}

// checkNotInside refuses a dst that is the directory src, or inside it,
// by identity rather than by name (Inside): a symlink, a bind mount
// of src or of a directory below it, or a second mount of its filesystem
// puts src at another path.
func checkNotInside(src, dst string) error {
	if in, err := Inside(dst, src); err != nil || !in {
		return nil // Make stat'ed both: gone since, the walk reports it
	}
	if Same(src, dst) {
		return refusal.New(dst, "source and destination are the same directory", "name a different destination")
	}
	return refusal.New(dst, "destination is inside the source "+quote(src)+": the copy would copy itself", "choose a destination outside the source")
}

func checkNotSame(src, dst string) error {
	a, err1 := os.Stat(src)
	b, err2 := os.Stat(dst)
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		return refusal.New(dst, "source and destination are the same file", "name a different destination")
	}
	return nil
}

func quote(s string) string { return `"` + s + `"` }
