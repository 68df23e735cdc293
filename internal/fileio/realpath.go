package fileio

import "path/filepath"

// RealPath is p made absolute with its symlinks resolved, as far as it
// exists: the part that does not exist yet is joined, unresolved, to the
// real path of its deepest existing ancestor. Where nothing resolves it is
// p made absolute, or p itself. It names a place, it proves nothing: a
// check that must hold against a writer compares identities, not paths.
func RealPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
