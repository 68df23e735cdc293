package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrUpFromMissing is returned by Resolve for a path that goes up ("..")
// from a directory that does not exist: the kernel cannot resolve it, and
// cutting it as text names another place than the one the path leads to
// once the directory is made.
var ErrUpFromMissing = errors.New(`the path goes up ("..") from a directory that does not exist`)

// Resolve is the path p as the kernel resolves it: absolute (from the
// working directory the kernel has, not $PWD), its longest existing
// prefix with every symlink and ".." resolved in turn, as open(2) walks
// it ("a/link/../d" is the link target's sibling d, not a/d), and the
// part that does not exist yet appended, without its "." components. A
// dangling symlink names its target (a directory made through the link is
// made there). A ".." in the part that does not exist is ErrUpFromMissing.
// p is never shortened as text (filepath.Clean) before it is resolved.
func Resolve(p string) (string, error) {
	abs := p
	if !filepath.IsAbs(p) {
		wd, err := syscall.Getwd()
		if err != nil {
			return "", err
		}
		abs = wd + string(filepath.Separator) + p
	}
	var rest []string
	hops := 0
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			for _, c := range rest {
				switch c {
				case "", ".":
				case "..":
					return "", ErrUpFromMissing
				default:
					r = filepath.Join(r, c)
				}
			}
			return r, nil
		}
		parent, base := cutLast(cur)
		if parent == cur {
			return "", &os.PathError{Op: "resolve", Path: p, Err: os.ErrNotExist}
		}
		if base == "" || base == "." {
			cur = parent
			continue
		}
		if t, err := os.Readlink(cur); err == nil && hops < 40 {
			// A dangling link: go on from its target.
			hops++
			if !filepath.IsAbs(t) {
				t = parent + string(filepath.Separator) + t
			}
			cur = t
			continue
		}
		rest = append([]string{base}, rest...)
		cur = parent
	}
}

// cutLast splits p at its last separator, without cleaning: the parent
// of "a/link/../d" is "a/link/..", which the kernel resolves through the
// link. The parent of the root is the root.
func cutLast(p string) (parent, base string) {
	i := strings.LastIndexByte(p, filepath.Separator)
	switch {
	case i < 0:
		return ".", p
	case i == len(filepath.VolumeName(p)):
		return p[:i+1], p[i+1:]
	}
	return p[:i], p[i+1:]
}

// RealPath is p made absolute with its symlinks resolved, as far as it
// exists, as Resolve does: the part that does not exist yet is joined,
// unresolved, to the real path of its deepest existing ancestor. Where
// Resolve cannot tell (a ".." after a directory that does not exist) it
// is p made absolute as text, or p itself. It names a place, it proves
// nothing: a check that must hold against a writer compares identities,
// not paths.
func RealPath(p string) string {
	if r, err := Resolve(p); err == nil {
		return r
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}

// NearestExisting is p, or its nearest parent that exists (by lstat).
func NearestExisting(p string) string {
	for {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			return p
		}
		p = filepath.Dir(p)
	}
}
