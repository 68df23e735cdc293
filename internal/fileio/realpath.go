package fileio

import (
	"os"
	"path/filepath"
)

// RealPath is p made absolute with its symlinks resolved, as far as it
// exists: the part that does not exist yet is joined, unresolved, to the
// real path of its deepest existing ancestor. A symbolic link whose target
// does not exist yet names that target (a directory made through the link
// is made there), and is resolved as such. Where nothing resolves it is p
// made absolute, or p itself. It names a place, it proves nothing: a check
// that must hold against a writer compares identities, not paths.
func RealPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	rest := ""
	hops := 0
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		if t, err := os.Readlink(cur); err == nil && hops < 40 {
			// A dangling link: go on from its target.
			hops++
			if !filepath.IsAbs(t) {
				t = filepath.Join(parent, t)
			}
			cur = filepath.Clean(t)
			continue
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
