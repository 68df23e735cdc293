package copyengine

import (
	"errors"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/filter"
)

// FilterRule is one --include or --exclude pattern (see Options.Filter).
type FilterRule = filter.Rule

// The kinds of FilterRule.
const (
	FilterExclude = filter.Exclude // leave out what the pattern matches
	FilterInclude = filter.Include // copy what the pattern matches
)

// filterRules compiles opt's Filter, Excludes and FilesFrom, or refuses the
// first pattern or listed path that is not valid.
func (opt *Options) filterRules() (*filter.Rules, error) {
	rules := opt.Filter
	for _, g := range opt.Excludes {
		rules = append(rules[:len(rules):len(rules)], FilterRule{Kind: FilterExclude, Pattern: g})
	}
	return compileFilter(rules, opt.FilesFrom)
}

// Excluder compiles rules and files as Run compiles Options.Filter and
// FilesFrom, refusing what Run refuses, and returns what the walk asks of
// them: whether the path rel (relative to a source directory) is left out,
// isDir saying whether it is a directory. treeverify.TreeOptions.Exclude takes
// it, so that a comparison leaves out what a copy does.
func Excluder(rules []FilterRule, files []string) (func(rel string, isDir bool) bool, error) {
	r, err := compileFilter(rules, files)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, nil
	}
	return r.Excluded, nil
}

func compileFilter(rules []FilterRule, files []string) (*filter.Rules, error) {
	r, err := filter.New(rules, files)
	var pat *filter.PatternError
	var lst *filter.PathError
	switch {
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
func (e *engine) excluded(sd *fileio.Dir, rel string, n fileio.DirEntry) bool {
	if e.filter == nil {
		return false
	}
	isDir := n.Type == fileio.ModeDir
	if n.Type == fileio.ModeSymlink && e.opt.Dereference && sd != nil {
		st, err := sd.StatFollow(n.Name)
		isDir = err == nil && st.IsDir()
	}
	return e.filter.Excluded(rel, isDir)
}
