package copyengine

import (
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
	return filter.Make(filter.Config{Rules: opt.Filter, Excludes: opt.Excludes, Files: opt.FilesFrom, GitIgnore: opt.GitIgnore, FilterFile: opt.FilterFile})
}

// Excluder compiles opt's filters (Filter, Excludes, FilesFrom, GitIgnore,
// FilterFile) as Run does, refusing what Run refuses, and returns what the
// walk of the source tree at root asks of them (filter.Rules.Excluder):
// whether the path rel (relative to root) is left out, isDir saying
// whether it is a directory. treeverify.TreeOptions.Exclude takes it, so
// that a comparison leaves out what a copy does.
func Excluder(opt *Options, root string) (func(rel string, isDir bool) bool, error) {
	r, err := opt.filterRules()
	if err != nil {
		return nil, err
	}
	return r.Excluder(root), nil
}

// ExplainFilter says what opt's filters decide for the path rel of the
// source tree at root, and why (filter.Explain): "copied" or "left out",
// the rule that decided (its flag, or its file and line), and the
// directory on the way that was left out, when one was.
func ExplainFilter(opt *Options, root, rel string) (string, error) {
	r, err := opt.filterRules()
	if err != nil {
		return "", err
	}
	return filter.Explain(r, root, rel, opt.Dereference)
}

// excluded reports whether the filter rules leave out n, an entry of the
// source directory sd at rel (relative to the source root): an excluded
// directory is neither created in the destination nor walked. A symlink is
// a directory when it leads to one and symlinks are followed (-L); sd may
// be nil, and then it is not (source.Excluded).
func (e *engine) excluded(root string, sd *fileio.Dir, rel string, n fileio.DirEntry) bool {
	return source.Excluded(e.filter, e.opt.Dereference, root, sd, rel, n)
}
