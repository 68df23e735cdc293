package filter

import (
	"bytes"
	"strings"
)

// A gitPattern is one line of a .gitignore file (or of .git/info/exclude,
// or of core.excludesFile), parsed as git parses it (dir.c,
// parse_path_pattern): a leading "!" negates, one trailing "/" matches
// directories only, a pattern without a "/" (the trailing one aside)
// matches the base name at any depth below its file's directory, any other
// is matched with its leading "/" dropped against the path relative to
// that directory.
type gitPattern struct {
	pattern  string // without "!" and the trailing "/"
	base     string // the directory of its file, relative to the repository root, "" or ending in "/"
	literal  int    // the length of its leading run of bytes that are not glob characters
	negative bool
	dirOnly  bool
	noDir    bool // no "/": matched against the base name
	endsWith bool // "*literal": the base name ends with literal
	// tail is the literal run that ends the pattern (after its last
	// glob character or "/"): a name it matches must end with it, which
	// rules out most names before wildmatch is asked.
	tail string
	src  *ruleSource
	line int
	text string // the line as it stands in the file, trimmed
}

// ruleSource names the file a rule was read from, for explanations.
type ruleSource struct {
	name string // as shown: relative to the source root, or a full path
}

// parseGitignore reads the lines of a .gitignore file as git does
// (add_patterns_from_buffer): a UTF-8 byte order mark at the start is
// skipped, a line ends at "\n", a "\r" before it is dropped, lines that
// are empty or start with "#" are skipped, and trailing spaces are
// trimmed unless quoted with "\". base is the directory the file applies
// to, relative to the repository root ("" or ending in "/").
func parseGitignore(data []byte, base string, src *ruleSource) []gitPattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []gitPattern
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		if i := bytes.IndexByte(l, 0); i >= 0 {
			l = l[:i] // git reads a line as a C string
		}
		s := trimTrailingSpaces(string(l))
		if s == "" {
			continue
		}
		out = append(out, newGitPattern(s, base, src, line))
	}
	return out
}

// trimTrailingSpaces drops the spaces (not tabs) that end s, unless the
// first of them is quoted with "\" (dir.c, trim_trailing_spaces).
func trimTrailingSpaces(s string) string {
	last := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if last < 0 {
				last = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			last = -1
		default:
			last = -1
		}
	}
	if last >= 0 {
		return s[:last]
	}
	return s
}

func newGitPattern(s, base string, src *ruleSource, line int) gitPattern {
	g := gitPattern{base: base, src: src, line: line, text: s}
	if strings.HasPrefix(s, "!") {
		g.negative = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		g.dirOnly = true
		s = s[:len(s)-1]
	}
	g.noDir = !strings.Contains(s, "/")
	g.literal = simpleLength(s)
	g.endsWith = strings.HasPrefix(s, "*") && simpleLength(s[1:]) == len(s)-1
	g.pattern = s
	g.tail = s[strings.LastIndexAny(s, `*?[]\/`)+1:]
	return g
}

// simpleLength is the length of the leading run of s that holds no glob
// character.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

// matches reports whether the pattern matches the path (relative to the
// repository root), whose base name name is the part after its last "/",
// as git's last_matching_pattern_from_list asks it: match_basename for a
// pattern without a slash, match_pathname for one with one.
func (g *gitPattern) matches(path, name string, isDir bool) bool {
	if g.dirOnly && !isDir {
		return false
	}
	if g.noDir {
		switch {
		case g.literal == len(g.pattern):
			return name == g.pattern
		case g.endsWith:
			return strings.HasSuffix(name, g.pattern[1:])
		}
		return strings.HasSuffix(name, g.tail) && wildmatch(g.pattern, name, false)
	}
	p, literal := g.pattern, g.literal
	if strings.HasPrefix(p, "/") {
		p, literal = p[1:], literal-1
	}
	if !strings.HasPrefix(path, g.base) || len(path) == len(g.base) {
		return false
	}
	name = path[len(g.base):]
	if literal > 0 {
		// The literal part is compared as it is, then the rest is
		// matched from there (match_pathname): a "**" right after it
		// counts as one at the start of a name.
		if literal > len(name) || name[:literal] != p[:literal] {
			return false
		}
		p, name = p[literal:], name[literal:]
		if p == "" && name == "" {
			return true
		}
	}
	return strings.HasSuffix(name, g.tail) && wildmatch(p, name, true)
}
