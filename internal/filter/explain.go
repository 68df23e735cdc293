package filter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Make is Build with each error a user can mend put as the refusal the
// user is told (refusal.New): a --filter-file name that is not a file's
// name, a pattern that is not valid, a files-from path that climbs out
// of the source.
func Make(c Config) (*Rules, error) {
	r, err := Build(c)
	var pat *PatternError
	var lst *PathError
	switch {
	case errors.Is(err, ErrFilterFileName):
		return nil, refusal.New(c.FilterFile, "is not a file name for --filter-file: "+err.Error(), "name the file each directory may hold, such as .fastcopy-ignore")
	case errors.As(err, &pat):
		return nil, refusal.New(pat.Rule.Pattern, "is not a valid "+pat.Rule.Kind.String()+" pattern: "+pat.Reason, "see 'fastcopy help filters' for the pattern syntax")
	case errors.As(err, &lst):
		return nil, refusal.New(lst.Path, "in the files-from list climbs out of the source (\"..\")", "list paths relative to the source root")
	case err != nil:
		return nil, err
	}
	return r, nil
}

// Excluder returns what the walk of the source tree at root asks of r:
// whether the path rel (relative to root) is left out, isDir saying
// whether it is a directory. The per-directory files are read from
// root's tree, each once. A nil r leaves out nothing, and gives nil.
func (r *Rules) Excluder(root string) func(rel string, isDir bool) bool {
	if r == nil {
		return nil
	}
	if r.PerDir() {
		return r.Tree(root).Excluded
	}
	return r.Excluded
}

// Explain says what r (nil: no rules) decides for the path rel of the
// source tree at root, and why: "copied" or "left out", the rule that
// decided (its flag, or its file and line), and the directory on the way
// that was left out, when one was. A rel with a final "/" is a directory
// unless the tree holds it as something else; deref says symlinks are
// followed (-L), so that one leading to a directory is one.
func Explain(r *Rules, root, rel string, deref bool) (string, error) {
	isDir := strings.HasSuffix(rel, "/")
	if p, err := CleanPath(rel); err == nil && p != "." {
		rel = p
	} else {
		return "", refusal.New(rel, "is not a path inside the source", "name a path relative to SOURCE")
	}
	if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
		isDir = st.IsDir() || (deref && st.Mode()&os.ModeSymlink != 0 && isDirFollow(filepath.Join(root, filepath.FromSlash(rel))))
	}
	var v Verdict
	at := rel
	if r != nil {
		v, at = r.Tree(root).Explain(rel, isDir)
	}
	what := "copied"
	if v.Excluded {
		what = "left out"
	}
	switch {
	case v.By == "":
		return rel + ": " + what + ": no rule matches", nil
	case at != rel:
		return fmt.Sprintf("%s: %s: its directory %q is left out by %s", rel, what, at, v.By), nil
	}
	return fmt.Sprintf("%s: %s by %s", rel, what, v.By), nil
}

func isDirFollow(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
