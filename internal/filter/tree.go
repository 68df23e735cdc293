package filter

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// GitDir is the name git gives its repository inside a working tree: with
// GitIgnore, an entry of this name is left out at every depth, as git
// leaves it out of every listing.
const GitDir = ".git"

// gitignoreName is the name of git's per-directory files.
const gitignoreName = ".gitignore"

// Config is what a run's filters are made of. The stages, in the order
// they are asked (the first that has a verdict decides):
//
//  1. Files: a path a files-from list does not hold is left out.
//  2. Rules: the --include and --exclude rules, first match decides.
//  3. FilterFile: the rules of the files of that name, per directory,
//     the deepest directory's first (each file's in its order), first
//     match decides.
//  4. GitIgnore: git's verdict from the .gitignore files,
//     .git/info/exclude and core.excludesFile; ".git" is left out.
//  5. Otherwise the path is copied.
type Config struct {
	Rules    []Rule
	Excludes []string // exclude patterns (--exclude), as Exclude rules after Rules
	Files    []string // a files-from list; nil for none
	// GitIgnore applies git's rules (.gitignore files and the
	// repository's exclude files) to each source tree.
	GitIgnore bool
	// FilterFile, when not "", is the name of per-directory files of
	// rules in ReadRules' syntax (default kind Exclude), each applying to
	// its directory and below with patterns relative to it.
	FilterFile string
}

// ErrFilterFileName is returned (wrapped) by Build for a FilterFile that
// is not a plain file name.
var ErrFilterFileName = errors.New("not a file name")

// Build compiles c as New does and readies the per-directory stages,
// whose files are read as the walk meets their directories, once per
// directory (see Rules.Tree).
func Build(c Config) (*Rules, error) {
	if c.FilterFile != "" && (strings.ContainsAny(c.FilterFile, `/`) || c.FilterFile == "." || c.FilterFile == "..") {
		return nil, fmt.Errorf("--filter-file %q: %w (it is looked for in every directory)", c.FilterFile, ErrFilterFileName)
	}
	rules := c.Rules
	for _, g := range c.Excludes {
		rules = append(rules[:len(rules):len(rules)], Rule{Kind: Exclude, Pattern: g})
	}
	r, err := New(rules, c.Files)
	if err != nil {
		return nil, err
	}
	if !c.GitIgnore && c.FilterFile == "" {
		return r, nil
	}
	if r == nil {
		r = &Rules{}
	}
	r.gitignore = c.GitIgnore
	r.filterFile = c.FilterFile
	return r, nil
}

// PerDir reports whether r reads per-directory files, so that its
// verdicts depend on the source tree (ExcludedIn).
func (r *Rules) PerDir() bool { return r != nil && (r.gitignore || r.filterFile != "") }

// ExcludedIn is Excluded for the path rel of the source tree at root: the
// per-directory stages read root's files. Without them it is Excluded.
func (r *Rules) ExcludedIn(root, rel string, isDir bool) bool {
	if !r.PerDir() {
		return r.Excluded(rel, isDir)
	}
	return r.Tree(root).Excluded(rel, isDir)
}

// Tree returns the per-directory rules of the source tree at root, made
// on the first call for that root and shared by every later one, so that
// each file is read once per run however often a path is asked about.
func (r *Rules) Tree(root string) *Tree {
	if v, ok := r.trees.Load(root); ok {
		return v.(*Tree)
	}
	v, _ := r.trees.LoadOrStore(root, newTree(r, root))
	return v.(*Tree)
}

// Tree is the rules of one source tree: Rules' global stages and the
// per-directory files under root.
type Tree struct {
	r    *Rules
	root string
	git  *gitRepo // the repository root holds, or one it lies in; nil for none
	top  *dirRules
	dirs sync.Map // rel -> *dirRules
	// last is the directory asked about last: the walk asks about a
	// directory's entries one after another.
	last atomic.Pointer[dirRules]
}

// gitRepo is what git reads besides the .gitignore files of the tree.
type gitRepo struct {
	prefix   string       // root's path in the repository's working tree, "" or ending in "/"
	excludes []gitPattern // info/exclude, then core.excludesFile: asked in that order
	lists    [][]gitPattern
}

// dirRules is one directory's files, loaded once.
type dirRules struct {
	rel  string // relative to the source root; "" for it
	base string // relative to the repository's root, "" or ending in "/"
	up   *dirRules
	once sync.Once
	git  []gitPattern // its .gitignore
	own  []ownRule    // its filter file
	err  error        // the first of its files that could not be read or parsed
}

// ownRule is one rule of a filter file.
type ownRule struct {
	c    compiled
	rule Rule
	src  *ruleSource
	line int
}

func newTree(r *Rules, root string) *Tree {
	t := &Tree{r: r, root: root}
	t.top = &dirRules{}
	if r.gitignore {
		t.git, t.top.up = t.findRepo()
		if t.git != nil {
			t.top.base = t.git.prefix
		}
	}
	t.dirs.Store("", t.top)
	return t
}

// dir returns the rules of the directory rel, loaded.
func (t *Tree) dir(rel string) *dirRules {
	if d := t.last.Load(); d != nil && d.rel == rel {
		return d // loaded: it is stored only once loaded
	}
	if v, ok := t.dirs.Load(rel); ok {
		d := v.(*dirRules)
		d.once.Do(func() { t.load(d) })
		t.last.Store(d)
		return d
	}
	parent := ""
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		parent = rel[:i]
	}
	up := t.dir(parent)
	base := ""
	if t.git != nil {
		base = t.git.prefix
	}
	v, _ := t.dirs.LoadOrStore(rel, &dirRules{rel: rel, base: base + rel + "/", up: up})
	d := v.(*dirRules)
	d.once.Do(func() { t.load(d) })
	t.last.Store(d)
	return d
}

// load reads d's files.
func (t *Tree) load(d *dirRules) {
	show := func(name string) string {
		if d.rel == "" {
			return name
		}
		return d.rel + "/" + name
	}
	if t.r.gitignore {
		if data, ok := t.readInTree(d, gitignoreName); ok {
			d.git = parseGitignore(data, d.base, &ruleSource{name: show(gitignoreName)})
		}
	}
	if t.r.filterFile != "" {
		if data, ok := t.readInTree(d, t.r.filterFile); ok {
			src := &ruleSource{name: show(t.r.filterFile)}
			rules, lines, err := readRules(strings.NewReader(string(data)), Exclude)
			if err != nil {
				d.fail(fmt.Errorf("%s: %w", filepath.Join(t.root, src.name), err))
				return
			}
			for i, rule := range rules {
				c, err := compile(rule)
				if err != nil {
					d.fail(fmt.Errorf("%s:%d: %w", filepath.Join(t.root, src.name), lines[i], err))
					continue
				}
				d.own = append(d.own, ownRule{c: c, rule: rule, src: src, line: lines[i]})
			}
		}
	}
}

// readInTree reads the file name of the directory rel, as git reads a
// .gitignore: a symlink is not followed, and a name that is not a regular
// file is no file of rules. A missing file is none; any other failure is
// kept in d (Err).
func (t *Tree) readInTree(d *dirRules, name string) ([]byte, bool) {
	p := filepath.Join(t.root, filepath.FromSlash(d.rel), name)
	lst, err := os.Lstat(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
			d.fail(err)
		}
		return nil, false // most directories have none: one system call
	}
	if !lst.Mode().IsRegular() {
		return nil, false // a symlink, a directory, a FIFO (never opened): no file of rules
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.fail(err)
		}
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		d.fail(err)
		return nil, false
	}
	if !st.Mode().IsRegular() || !os.SameFile(st, lst) {
		return nil, false // swapped since the lstat
	}
	data, err := io.ReadAll(f)
	if err != nil {
		d.fail(err)
		return nil, false
	}
	return data, true
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func (d *dirRules) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// Err returns the error met reading or parsing the rule files of the
// directory rel (relative to the tree's root), whose rules, or those
// of them that failed, are then not applied; nil when there was none.
func (t *Tree) Err(rel string) error {
	return t.dir(rel).err
}

// Excluded reports whether the path rel of the tree is left out (see
// Config for the order of the stages). As with Rules.Excluded, the
// caller does not walk an excluded directory, so that what lies below it
// is never asked about.
func (t *Tree) Excluded(rel string, isDir bool) bool {
	return t.decide(rel, isDir).Excluded
}

// Verdict is a decision and what made it.
type Verdict struct {
	Excluded bool
	// By names the rule that decided: "" when none did (the path is
	// copied), else the stage and, for a rule read from a file, the file
	// (relative to the source root or a full path), its line, and the
	// rule as written.
	By string
}

func (t *Tree) decide(rel string, isDir bool) Verdict {
	r := t.r
	if r.files != nil && !r.files.holds(rel, isDir) {
		return Verdict{true, "not in the --files-from list"}
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	if i := r.ruleFor(rel, name, isDir); i >= 0 {
		c := r.rules[i]
		return Verdict{c.kind == Exclude, r.given[i].String()}
	}
	dirRel := ""
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dirRel = rel[:i]
	}
	d := t.dir(dirRel)
	if r.filterFile != "" {
		for l := d; l != nil; l = l.up {
			if len(l.own) == 0 {
				continue
			}
			sub := rel
			if l.rel != "" {
				sub = rel[len(l.rel)+1:]
			}
			subName := sub[strings.LastIndexByte(sub, '/')+1:]
			for _, o := range l.own {
				if o.c.match(sub, subName, isDir) {
					return Verdict{o.c.kind == Exclude, fmt.Sprintf("%s:%d: %s", o.src.name, o.line, ruleText(o.rule))}
				}
			}
		}
	}
	if r.gitignore {
		if name == GitDir {
			return Verdict{true, "--gitignore (git leaves " + GitDir + " out)"}
		}
		if strings.HasPrefix(rel, GitDir+"/") || strings.Contains(rel, "/"+GitDir+"/") {
			return Verdict{} // inside a .git an --include let in: git's rules are not for it
		}
		p := rel
		if t.git != nil {
			p = t.git.prefix + rel
		}
		for l := d; l != nil; l = l.up {
			if g := lastMatch(l.git, p, name, isDir); g != nil {
				return g.verdict()
			}
		}
		if t.git != nil {
			for _, list := range t.git.lists {
				if g := lastMatch(list, p, name, isDir); g != nil {
					return g.verdict()
				}
			}
		}
	}
	return Verdict{}
}

// ruleText is a filter file's rule as written.
func ruleText(r Rule) string {
	if r.Kind == Include {
		return "+ " + r.Pattern
	}
	return "- " + r.Pattern
}

// lastMatch returns the last pattern of list that matches p, which decides
// for its file as in git.
func lastMatch(list []gitPattern, p, name string, isDir bool) *gitPattern {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].matches(p, name, isDir) {
			return &list[i]
		}
	}
	return nil
}

func (g *gitPattern) verdict() Verdict {
	return Verdict{!g.negative, fmt.Sprintf("%s:%d: %s", g.src.name, g.line, g.text)}
}

// Explain says what the rules decide for rel and why, as a walk meets it:
// a directory on the way down that is left out leaves rel out with it.
func (t *Tree) Explain(rel string, isDir bool) (v Verdict, at string) {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		if v := t.decide(dir, true); v.Excluded {
			return v, dir
		}
	}
	return t.decide(rel, isDir), rel
}

// findRepo looks for the git repository the tree is in: root or the
// nearest directory above it that holds a .git. It returns what git reads
// for it besides the tree's own .gitignore files, and the rules of the
// directories between the repository's root and root (git applies their
// .gitignore files to root's paths too), nearest first.
func (t *Tree) findRepo() (*gitRepo, *dirRules) {
	abs, err := filepath.Abs(t.root)
	if err != nil {
		return nil, nil
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	var work string
	var gitDir string
	for d := abs; ; {
		if g, ok := gitDirOf(d); ok {
			work, gitDir = d, g
			break
		}
		up := filepath.Dir(d)
		if up == d {
			return nil, nil
		}
		d = up
	}
	rel, err := filepath.Rel(work, abs)
	if err != nil {
		return nil, nil
	}
	repo := &gitRepo{}
	if rel != "." {
		repo.prefix = filepath.ToSlash(rel) + "/"
	}
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	// info/exclude is asked before core.excludesFile (dir.c, both in
	// the EXC_FILE group, the later-added first).
	info := filepath.Join(common, "info", "exclude")
	if b, ok := readRegular(info, true); ok {
		repo.lists = append(repo.lists, parseGitignore(b, "", &ruleSource{name: info}))
	}
	if x := excludesFile(filepath.Join(common, "config")); x != "" {
		if b, ok := readRegular(x, true); ok {
			repo.lists = append(repo.lists, parseGitignore(b, "", &ruleSource{name: x}))
		}
	}
	// The directories from the repository's root down to root's parent.
	var up *dirRules
	if repo.prefix != "" {
		names := strings.Split(strings.TrimSuffix(repo.prefix, "/"), "/")
		dir := work
		base := ""
		for i := 0; i < len(names); i++ {
			l := &dirRules{rel: "", base: base, up: up}
			l.once.Do(func() {})
			p := filepath.Join(dir, gitignoreName)
			if b, ok := readRegular(p, false); ok {
				l.git = parseGitignore(b, base, &ruleSource{name: p})
			}
			up = l
			dir = filepath.Join(dir, names[i])
			base += names[i] + "/"
		}
	}
	return repo, up
}

// readRegular reads p if it is a regular file (through a symlink at its
// last component only with follow), never blocking on a FIFO.
func readRegular(p string, follow bool) ([]byte, bool) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	st, err := stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !fst.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(f)
	return b, err == nil
}

// gitDirOf returns the git directory of the working tree d: d/.git when
// it is a directory, or where a .git file ("gitdir: PATH", a linked
// worktree's or a submodule's) sends.
func gitDirOf(d string) (string, bool) {
	p := filepath.Join(d, GitDir)
	st, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	if st.IsDir() {
		return p, true
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	s := strings.TrimSpace(string(b))
	if !strings.HasPrefix(s, "gitdir:") {
		return "", false
	}
	g := strings.TrimSpace(strings.TrimPrefix(s, "gitdir:"))
	if !filepath.IsAbs(g) {
		g = filepath.Join(d, g)
	}
	return g, true
}
