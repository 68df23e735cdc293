package copyengine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/filter"
	"github.com/fastcopy/fastcopy/internal/source"
)

// FilterRule is one --include or --exclude pattern (see Options.Filter).
type FilterRule = filter.Rule

// The kinds of FilterRule.
const (
	FilterExclude = filter.Exclude // leave out what the pattern matches
	FilterInclude = filter.Include // copy what the pattern matches
)

// filterRules compiles opt's Filter, Excludes, FilesFrom, GitIgnore and
// FilterFile, or refuses the first pattern or listed path that is not
// valid.
func (opt *Options) filterRules() (*filter.Rules, error) {
	rules := opt.Filter
	for _, g := range opt.Excludes {
		rules = append(rules[:len(rules):len(rules)], FilterRule{Kind: FilterExclude, Pattern: g})
	}
	return compileFilter(filter.Config{Rules: rules, Files: opt.FilesFrom, GitIgnore: opt.GitIgnore, FilterFile: opt.FilterFile})
}

// Excluder compiles opt's filters (Filter, Excludes, FilesFrom, GitIgnore,
// FilterFile) as Run does, refusing what Run refuses, and returns what the
// walk of the source tree at root asks of them: whether the path rel
// (relative to root) is left out, isDir saying whether it is a directory.
// The per-directory files are read from root's tree, each once.
// treeverify.TreeOptions.Exclude takes it, so that a comparison leaves out
// what a copy does.
func Excluder(opt *Options, root string) (func(rel string, isDir bool) bool, error) {
	r, err := opt.filterRules()
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, nil
	}
	if r.PerDir() {
		return r.Tree(root).Excluded, nil
	}
	return r.Excluded, nil
}

// ExplainFilter says what opt's filters decide for the path rel of the
// source tree at root, and why: "copied" or "left out", the rule that
// decided (its flag, or its file and line), and the directory on the way
// that was left out, when one was.
func ExplainFilter(opt *Options, root, rel string) (string, error) {
	r, err := opt.filterRules()
	if err != nil {
		return "", err
	}
	isDir := strings.HasSuffix(rel, "/")
	if p, err := filter.CleanPath(rel); err == nil && p != "." {
		rel = p
	} else {
		return "", refuse(rel, "is not a path inside the source", "name a path relative to SOURCE")
	}
	if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
		isDir = st.IsDir() || (opt.Dereference && st.Mode()&os.ModeSymlink != 0 && isDirFollow(filepath.Join(root, filepath.FromSlash(rel))))
	}
	var v filter.Verdict
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

func compileFilter(c filter.Config) (*filter.Rules, error) {
	r, err := filter.Build(c)
	var pat *filter.PatternError
	var lst *filter.PathError
	switch {
	case errors.Is(err, filter.ErrFilterFileName):
		return nil, refuse(c.FilterFile, "is not a file name for --filter-file: "+err.Error(), "name the file each directory may hold, such as .fastcopy-ignore")
	case errors.As(err, &pat):
		return nil, refuse(pat.Rule.Pattern, "is not a valid "+pat.Rule.Kind.String()+" pattern: "+pat.Reason, "see 'fastcopy help filters' for the pattern syntax")
	case errors.As(err, &lst):
		return nil, refuse(lst.Path, "in the files-from list climbs out of the source (\"..\")", "list paths relative to the source root")
	case err != nil:
		return nil, err
	}
	return r, nil
}

// excluded reports whether the filter rules leave out n, an entry of the
// source directory sd at rel (relative to the source root): an excluded
// directory is neither created in the destination nor walked. A symlink is
// a directory when it leads to one and symlinks are followed (-L); sd may
// be nil, and then it is not.
func (e *engine) excluded(root string, sd *fileio.Dir, rel string, n fileio.DirEntry) bool {
	return source.Excluded(e.filter, e.opt.Dereference, root, sd, rel, n)
}

// ruleFileErr returns the error met reading the per-directory rule files
// (--gitignore, --filter-file) of the source directory rel of root, once
// its entries were judged: the walk fails the directory with it, so that
// --delete keeps what is in it.
func (e *engine) ruleFileErr(root, rel string) error {
	if !e.filter.PerDir() {
		return nil
	}
	return e.filter.Tree(root).Err(rel)
}
