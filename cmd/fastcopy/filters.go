package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/filter"
)

// filterArg is one --include, --exclude or --exclude-from, in the order
// given: all three flags append to one list, so that the rules keep the
// order of the command line.
type filterArg struct {
	flag  string // "include", "exclude" or "exclude-from"
	value string
}

// filterFlag is the pflag.Value of one of those flags.
type filterFlag struct {
	flag string
	meta string // the placeholder --help shows
	list *[]filterArg
}

func (f *filterFlag) Set(s string) error {
	*f.list = append(*f.list, filterArg{flag: f.flag, value: s})
	return nil
}

func (f *filterFlag) String() string { return "" }
func (f *filterFlag) Type() string   { return f.meta }

// filterOptions are the flags that choose what is copied.
type filterOptions struct {
	args       []filterArg
	filesFrom  string
	from0      bool
	gitignore  bool
	filterFile string
	explain    []string // --explain-filter: paths to explain instead of running
}

// given reports whether any filter flag is given.
func (o *filterOptions) given() bool {
	return len(o.args) > 0 || o.filesFrom != "" || o.gitignore || o.filterFile != ""
}

// addFlags defines the filter flags; verb is what the command does with
// the paths let through ("copy", "compare").
func (o *filterOptions) addFlags(cmd *cobra.Command, verb string) {
	f := cmd.Flags()
	f.Var(&filterFlag{"exclude", "GLOB", &o.args}, "exclude", "leave out paths matching GLOB (repeatable; with --include, the first rule that matches decides; see 'fastcopy help filters')")
	f.Var(&filterFlag{"include", "GLOB", &o.args}, "include", verb+" paths matching GLOB, whatever later rules say (repeatable; see 'fastcopy help filters')")
	f.Var(&filterFlag{"exclude-from", "FILE", &o.args}, "exclude-from", "read rules from FILE (- reads standard input), one a line, at this place among the rules: GLOB or '- GLOB' excludes, '+ GLOB' includes; '#' starts a comment")
	f.StringVar(&o.filesFrom, "files-from", "", verb+" only the paths `FILE` lists (relative to SOURCE, one a line; - reads standard input), the directories leading to them and all below a listed directory")
	f.BoolVar(&o.from0, "from0", false, "the --files-from list is NUL-separated (find -print0), not one path a line")
	f.BoolVar(&o.gitignore, "gitignore", false, "leave out what git ignores: the .gitignore files of SOURCE's tree, its repository's .git/info/exclude and core.excludesFile, and .git itself (asked after --include, --exclude and --filter-file; see 'fastcopy help filters')")
	f.StringVar(&o.filterFile, "filter-file", "", "read rules from the file `NAME` in every directory of SOURCE, for that directory and below, as --exclude-from reads them (patterns relative to that directory; deeper files first)")
	f.StringArrayVar(&o.explain, "explain-filter", nil, "say whether the filters let `PATH` (relative to SOURCE) through and which rule or file decided, then stop: nothing is "+verb+"d (repeatable)")
}

// apply reads the pattern files and the files-from list and sets eo's
// Filter and FilesFrom. Run checks the patterns.
func (o *filterOptions) apply(eo *copyengine.Options, stdin io.Reader) error {
	if o.from0 && o.filesFrom == "" {
		return usageError{fmt.Errorf("--from0 applies to --files-from, which is not given")}
	}
	stdins := 0
	if o.filesFrom == "-" {
		stdins++
	}
	for _, a := range o.args {
		if a.flag == "exclude-from" && a.value == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		return usageError{errors.New("standard input can be read only once: name a file for all but one of --files-from - and --exclude-from -")}
	}
	for _, a := range o.args {
		switch a.flag {
		case "include":
			eo.Filter = append(eo.Filter, copyengine.FilterRule{Kind: copyengine.FilterInclude, Pattern: a.value})
		case "exclude":
			eo.Filter = append(eo.Filter, copyengine.FilterRule{Kind: copyengine.FilterExclude, Pattern: a.value})
		case "exclude-from":
			var rules []filter.Rule
			err := readList(a.value, stdin, func(r io.Reader) (err error) {
				rules, err = filter.ReadRules(r, filter.Exclude)
				return err
			})
			if err != nil {
				return &copyengine.RefusalError{Path: a.value, Msg: "cannot read the --exclude-from file: " + err.Error(), Hint: "name a readable file of patterns, one a line"}
			}
			eo.Filter = append(eo.Filter, rules...)
		}
	}
	eo.GitIgnore = o.gitignore
	eo.FilterFile = o.filterFile
	if o.filesFrom != "" {
		err := readList(o.filesFrom, stdin, func(r io.Reader) (err error) {
			eo.FilesFrom, err = filter.ReadList(r, o.from0)
			return err
		})
		if err != nil {
			return &copyengine.RefusalError{Path: o.filesFrom, Msg: "cannot read the --files-from list: " + err.Error(), Hint: "name a readable file of paths relative to SOURCE, or - for standard input"}
		}
	}
	return nil
}

// explainAll prints, for each --explain-filter PATH, what the filters eo
// decide for it in each directory of sources: one line a path (with the
// source first when there are several).
func (o *filterOptions) explainAll(out *output, eo *copyengine.Options, sources []string) error {
	dirs := 0
	for _, src := range sources {
		if st, err := os.Stat(src); err != nil || !st.IsDir() {
			continue // a file SOURCE is copied as named
		}
		dirs++
		for _, p := range o.explain {
			line, err := copyengine.ExplainFilter(eo, src, p)
			if err != nil {
				return err
			}
			if len(sources) > 1 {
				line = src + ": " + line
			}
			out.printf(out.stdout, "%s\n", line)
		}
	}
	if dirs == 0 {
		return &copyengine.RefusalError{Path: sources[0], Msg: "--explain-filter explains paths inside a SOURCE directory, and no SOURCE is one", Hint: "name the directory the paths are in as SOURCE"}
	}
	return nil
}

// readList calls read on the file name, or on stdin when name is "-".
func readList(name string, stdin io.Reader, read func(io.Reader) error) error {
	if name == "-" {
		return read(stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f)
}

// newFiltersTopic is 'fastcopy help filters': a help topic, not a command.
func newFiltersTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "filters",
		Short: "What is copied: --include, --exclude, --gitignore and more",
		Long:  filtersHelp,
	}
}

const filtersHelp = `Which paths of SOURCE are copied: --include, --exclude, --exclude-from,
--files-from, and the files a tree holds: --gitignore, --filter-file.
Patterns match the path relative to SOURCE (a tree's root; for SOURCE...
DIRECTORY, each SOURCE's), with "/" between names.

PATTERNS
  * ? [a-z] [!a-z] {jpg,png}
                as in the shell, within one name ("*" never matches a "/");
                \ quotes the next character
  **            as a whole name: any number of directories, none included
                ("**/*.tmp" matches "a.tmp" and "x/y/a.tmp")
  name          no "/" (but a final one): the name at any depth
                ("cache" matches "cache" and "x/y/cache")
  /path  ./path a leading "/" or "./": anchored at SOURCE ("/cache" is
                SOURCE's own "cache" only)
  dir/name      a "/" inside: anchored at SOURCE too, as in .gitignore
                ("sub/cache" is "sub/cache" only; "**/sub/cache" at any depth)
  pattern/      a final "/": directories only ("cache/" leaves out
                directories named cache, not files)
  dir/**        the directory and everything below it
A pattern also matches a name written exactly as it ("photo[1].jpg").
A malformed pattern (an unclosed "[" or "{", a final "\") is refused
before anything is written.

ORDER
Rules apply in command-line order, --include and --exclude interleaved,
and the first that matches a path decides; a path no rule matches is
copied. An excluded directory is neither created in DEST nor walked, so
nothing below it is copied, whatever later rules say: an --include of
"dir/keep" after --exclude dir/ (or before it) copies nothing of dir. To
keep one file of a directory, exclude its contents, not the directory:
  fastcopy --include dir/keep --exclude 'dir/*' SOURCE DEST
To copy only some files, let the directories in first:
  fastcopy --include '*/' --include '*.jpg' --exclude '*' SOURCE DEST
(every directory is then created, empty or not).

--exclude-from FILE
FILE ("-": standard input) holds one rule a line, read at its place among
the rules: "GLOB" or "- GLOB" excludes, "+ GLOB" includes. Blank lines and
lines starting with "#" are skipped, as is a "\r" ending a line; other
spaces are part of the pattern.

--files-from FILE
FILE ("-": standard input) lists paths relative to SOURCE, one a line, or
NUL-separated with --from0 (find -print0). Only those are copied, with the
directories leading to them; a listed directory is copied with everything
below it (unlike rsync, which copies only the directory itself without
-r): a backup list that names "Documents" means the documents. A leading
"/" or "./" and a final "/" are ignored, a path with ".." is refused, and a
listed path SOURCE lacks is skipped. --include and --exclude still apply
to what the list names.

--gitignore
Leaves out what git ignores, with git's rules exactly: every .gitignore
of SOURCE's tree applies to its directory and below, a deeper file's
patterns before its parent's, the last matching line of a file deciding;
"!" re-includes, a final "/" matches directories only, a "/" at the start
or inside anchors at the file's directory, "**" crosses directories, "\"
quotes ("\#", "\!", a final "\ "), trailing spaces are dropped; a path
inside an ignored directory cannot be re-included (the directory is not
walked). The repository SOURCE is in (SOURCE or a directory above it with
a .git) adds its .git/info/exclude and core.excludesFile, after every
.gitignore, and the .gitignore files between its root and SOURCE. Every
entry named .git is left out (--include .git/ keeps the repository; git's
rules do not apply inside it). A symlink named .gitignore is not followed,
as git does not. SOURCE itself is always copied. After a --gitignore copy,
DEST holds what 'git ls-files --cached --others --exclude-standard' lists
(and directories).
  fastcopy --gitignore ~/src/project /backup/project

--filter-file NAME
Reads the file NAME in every directory of SOURCE as --exclude-from reads
a file ("GLOB" or "- GLOB" excludes, "+ GLOB" includes, "#" comments),
for that directory and below: its patterns are relative to it ("/x" is
that directory's x). The deepest directory's file is asked first, each
file's rules in order, the first match deciding. A file with a malformed
pattern fails its directory (exit 3; --delete keeps what is there).
  fastcopy --filter-file .fastcopy-ignore ~/work /backup/work

THE ORDER OF THE STAGES
A path is asked, in this order, and the first with a verdict decides:
  1. --files-from: a path the list does not hold is left out;
  2. --include, --exclude, --exclude-from, in command-line order;
  3. --filter-file files, the deepest first;
  4. --gitignore (.git, then the .gitignore files, the deepest first,
     then .git/info/exclude, then core.excludesFile);
  5. none: the path is copied.
So the command line overrides the tree's files (--include .env copies a
.env git ignores), and a tree's own --filter-file overrides git's rules
("+ keep.tmp" keeps what a .gitignore's "*.tmp" leaves out). Each file is
read once a run, when the walk first reaches its directory.

--explain-filter PATH
Says, for PATH (relative to SOURCE; a final "/" for a directory SOURCE
lacks), whether it is copied and which rule decided, by flag or by file
and line, or which directory on the way is left out, then stops: nothing
is copied. Repeatable.
  $ fastcopy --gitignore --explain-filter node_modules/x/i.js ~/src/p /b
  node_modules/x/i.js: left out: its directory "node_modules" is left out
  by .gitignore:3: node_modules/

Dry runs (-n) list what the rules let through, as the copy would.
'fastcopy verify SOURCE DEST' takes the same flags and compares what they
let through, leaving the other paths out of both trees: after a filtered
copy, verify with the same filters. --gitignore and --filter-file read
their files from SOURCE's tree for both trees; --delete keeps what they
leave out, as it keeps what --exclude leaves out.

docs/filters.md has examples and how these rules differ from rsync's.
`
