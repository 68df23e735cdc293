package filter

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// Kind says what a rule does with the paths it matches.
type Kind uint8

// The kinds of rule.
const (
	Exclude Kind = iota // leave the path out (--exclude)
	Include             // copy the path (--include)
)

// String returns the flag that gives a rule of this kind.
func (k Kind) String() string {
	if k == Include {
		return "--include"
	}
	return "--exclude"
}

// Rule is one --include or --exclude pattern, as given.
type Rule struct {
	Kind    Kind
	Pattern string
}

// String returns the rule as it is written on the command line.
func (r Rule) String() string { return r.Kind.String() + " " + r.Pattern }

// ErrPattern is returned (wrapped in a *PatternError) by New and Compile
// for a pattern that is malformed or can match nothing.
var ErrPattern = errors.New("not a valid pattern")

// PatternError names a pattern New or Compile refused, and why.
type PatternError struct {
	Rule   Rule
	Reason string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("%s %q: not a valid pattern: %s", e.Rule.Kind, e.Rule.Pattern, e.Reason)
}

// Unwrap returns ErrPattern.
func (e *PatternError) Unwrap() error { return ErrPattern }

// compiled is a rule ready to match.
type compiled struct {
	kind     Kind
	glob     string // the pattern, its leading "/" or "./" and trailing "/" removed
	anchored bool   // match glob against the whole relative path, else the base name
	dirOnly  bool   // match directories only
}

// compile checks one rule and returns it ready to match.
func compile(r Rule) (compiled, error) {
	c := compiled{kind: r.Kind, glob: r.Pattern}
	if strings.HasPrefix(c.glob, "./") {
		c.glob = c.glob[1:] // "./x" is "/x"
	}
	if strings.HasPrefix(c.glob, "/") {
		c.anchored = true
		c.glob = strings.TrimLeft(c.glob, "/")
	}
	if strings.HasSuffix(c.glob, "/") {
		c.dirOnly = true
		c.glob = strings.TrimRight(c.glob, "/")
	}
	if c.glob == "" || c.glob == "." {
		return c, &PatternError{Rule: r, Reason: "matches no path (name one relative to the source root)"}
	}
	if strings.Contains(c.glob, "/") {
		c.anchored = true // as in .gitignore: "sub/x" is "/sub/x"
	}
	if !doublestar.ValidatePattern(c.glob) {
		return c, &PatternError{Rule: r, Reason: "an unclosed '[' or '{', or a '\\' at the end"}
	}
	return c, nil
}

// Compile checks a rule, as New does, and returns the error New would.
func Compile(r Rule) error {
	_, err := compile(r)
	return err
}

func (c *compiled) match(rel, base string, isDir bool) bool {
	if c.dirOnly && !isDir {
		return false
	}
	s := base
	if c.anchored {
		s = rel
	}
	if s == c.glob {
		return true // "photo[1].jpg" names that file too
	}
	ok, _ := doublestar.Match(c.glob, s)
	return ok
}

// Rules decides which paths a run copies. The nil *Rules copies all.
type Rules struct {
	rules []compiled
	given []Rule // rules as given, for explanations
	files *fileSet

	// The per-directory stages (Build).
	gitignore  bool
	filterFile string
	trees      sync.Map // source root -> *Tree
}

// New compiles rules, in the order given (the first that matches a path
// decides), and files, the paths of a files-from list (nil for none; see
// ReadList). It refuses the first malformed pattern with a *PatternError,
// and a listed path that climbs out of the source with a *PathError.
func New(rules []Rule, files []string) (*Rules, error) {
	if len(rules) == 0 && files == nil {
		return nil, nil
	}
	r := &Rules{}
	for _, rule := range rules {
		c, err := compile(rule)
		if err != nil {
			return nil, err
		}
		r.rules = append(r.rules, c)
		r.given = append(r.given, rule)
	}
	if files != nil {
		fs, err := newFileSet(files)
		if err != nil {
			return nil, err
		}
		r.files = fs
	}
	return r, nil
}

// Excluded reports whether the path rel (relative to the source root; see
// the package doc) is left out. isDir says whether it is a directory (as
// the walk sees it: a symlink to one only when symlinks are followed). An
// excluded directory is not to be walked.
func (r *Rules) Excluded(rel string, isDir bool) bool {
	if r == nil {
		return false
	}
	if r.files != nil && !r.files.holds(rel, isDir) {
		return true
	}
	if i := r.ruleFor(rel, rel[strings.LastIndexByte(rel, '/')+1:], isDir); i >= 0 {
		return r.rules[i].kind == Exclude
	}
	return false
}

// ruleFor returns the index of the first rule that matches rel, whose
// base name is base, or -1.
func (r *Rules) ruleFor(rel, base string, isDir bool) int {
	for i := range r.rules {
		if r.rules[i].match(rel, base, isDir) {
			return i
		}
	}
	return -1
}

// fileSet is a files-from list.
type fileSet struct {
	all     bool            // "." was listed: the whole source
	listed  map[string]bool // the paths listed, and all below them
	leading map[string]bool // directories on the way to a listed path
}

func newFileSet(files []string) (*fileSet, error) {
	s := &fileSet{listed: map[string]bool{}, leading: map[string]bool{}}
	for _, f := range files {
		p, err := CleanPath(f)
		if err != nil {
			return nil, err
		}
		if p == "." {
			s.all = true
			continue
		}
		s.listed[p] = true
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			s.leading[d] = true
		}
	}
	return s, nil
}

// holds reports whether rel is listed, lies below a listed path, or is a
// directory leading to one.
func (s *fileSet) holds(rel string, isDir bool) bool {
	if s.all || s.listed[rel] || (isDir && s.leading[rel]) {
		return true
	}
	for d := rel; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			return false
		}
		d = d[:i]
		if s.listed[d] {
			return true
		}
	}
}

// CleanPath returns a files-from entry as a path relative to the source
// root: a leading "/" or "./" and a trailing "/" removed, "a//b" and
// "a/./b" made "a/b". It refuses an entry with a ".." component.
func CleanPath(p string) (string, error) {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "", &PathError{Path: p}
		}
	}
	c := path.Clean("/" + p)
	if c == "/" {
		return ".", nil // the source root: all of it
	}
	return c[1:], nil
}

// PathError is returned by New and CleanPath for a files-from entry that
// climbs out of the source root ("..").
type PathError struct {
	Path string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%q in the files-from list climbs out of the source (\"..\")", e.Path)
}

// ReadRules reads a pattern file (--exclude-from): one pattern a line,
// of kind def unless the line starts with "+ " (include) or "- "
// (exclude). Blank lines, lines starting with "#", and a final "\r" of a
// line (a file written on Windows) are ignored.
func ReadRules(r io.Reader, def Kind) ([]Rule, error) {
	rules, _, err := readRules(r, def)
	return rules, err
}

// readRules is ReadRules, with the line number of each rule.
func readRules(r io.Reader, def Kind) ([]Rule, []int, error) {
	var out []Rule
	var lines []int
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k := def
		switch {
		case strings.HasPrefix(line, "+ "):
			k, line = Include, line[2:]
		case strings.HasPrefix(line, "- "):
			k, line = Exclude, line[2:]
		}
		out = append(out, Rule{Kind: k, Pattern: line})
		lines = append(lines, n)
	}
	return out, lines, sc.Err()
}

// ReadList reads a files-from list: one path a line, or, with nul, paths
// ended by NUL bytes (find -print0). Empty entries are ignored; the others
// are kept exactly (a name may begin or end with a space).
func ReadList(r io.Reader, nul bool) ([]string, error) {
	sep := byte('\n')
	if nul {
		sep = 0
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, p := range bytes.Split(data, []byte{sep}) {
		if len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out, nil
}
