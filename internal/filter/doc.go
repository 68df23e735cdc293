// Package filter decides which paths of a source tree a run copies: the
// --include and --exclude rules in the order given, and the list of
// --files-from.
//
// A path is relative to the source root, slash-separated, without a
// leading "./" or "/" ("photos/2024/a.jpg"). The rules, first match wins:
//
//   - "**" as a whole path component matches any number of directories,
//     none included: "**/*.tmp" matches "a.tmp" and "x/y/a.tmp". Elsewhere
//     "*", "?", "[...]", "{a,b}" and "\" quoting have their usual meaning
//     (github.com/bmatcuk/doublestar/v4); "*" never crosses a "/".
//   - A pattern without a slash (a trailing one aside) matches the base
//     name at any depth: "cache" matches "cache" and "a/b/cache".
//   - A pattern with a leading "/" or "./", or with a slash inside, is
//     anchored at the source root and matched against the whole relative
//     path: "/cache" and "./cache" match only "cache", "sub/cache" only
//     "sub/cache" ("**/sub/cache" matches it at any depth).
//   - A trailing "/" matches directories only: "cache/" leaves out
//     directories named cache, not files.
//   - A pattern also matches a path or name equal to it as written, glob
//     characters and all: "photo[1].jpg" matches that name.
//   - The first rule that matches decides; a path no rule matches is
//     included. An excluded directory is not walked, so nothing below it
//     is copied, whatever later rules say: to copy only "dir/keep" of
//     "dir", exclude the directory's contents, not the directory:
//     include "dir/keep", then exclude "dir/*".
//
// With a files-from list, only the paths listed, the directories leading to
// them and (for a listed directory) everything below it are copied; the
// rules still apply to each of those.
//
// Build adds the stages a tree holds itself, read per directory as the
// walk meets it (Tree, one per source root, each file read once): files
// of a chosen name in the rule syntax above (FilterFile, patterns relative
// to the file's directory, the deepest file first), and git's .gitignore
// files with the repository's info/exclude and core.excludesFile
// (GitIgnore), matched with git's own rules (wildmatch.go, gitignore.go),
// which differ from the ones above: the last matching line of a file
// decides, "*" crosses no "/" in any pattern, and a pattern equal to a name
// matches it only through git's quoting. Config gives the order of the
// stages.
package filter
