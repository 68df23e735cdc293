package mhl

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultIgnore are the patterns of a new history, as the reference
// implementation writes them.
var DefaultIgnore = []string{".DS_Store", "ascmhl", "ascmhl/"}

// Ignore matches paths against a generation's ignore patterns, read as
// gitignore ("gitwildmatch") patterns: '*' and '?' match within one name,
// '**' across names, [...] a class; a pattern without '/' (but a trailing
// one) matches a name at any depth, one with '/' is anchored at the root; a
// trailing '/' matches directories only; '!' re-includes; the last pattern
// that matches decides. What a pattern matches, it matches with everything
// below it. The ascmhl folders are always ignored.
type Ignore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	re      *regexp.Regexp
	dirOnly bool
	negate  bool
}

// NewIgnore compiles patterns. Empty lines and comments (#) are skipped.
func NewIgnore(patterns []string) (*Ignore, error) {
	ig := &Ignore{}
	for _, p := range patterns {
		r, ok, err := compileIgnore(p)
		if err != nil {
			return nil, fmt.Errorf("ignore pattern %q: %w", p, err)
		}
		if ok {
			ig.rules = append(ig.rules, r)
		}
	}
	return ig, nil
}

// compileIgnore compiles one pattern; ok is false for a blank line, a
// comment or a pattern that is empty once its '!' and trailing '/' are
// removed.
func compileIgnore(p string) (r ignoreRule, ok bool, err error) {
	p = strings.TrimRight(p, " ")
	if p == "" || strings.HasPrefix(p, "#") {
		return r, false, nil
	}
	if strings.HasPrefix(p, "!") {
		r.negate = true
		p = p[1:]
	} else if strings.HasPrefix(p, `\`) {
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	if p == "" {
		return r, false, nil
	}
	re, err := regexp.Compile(globRegexp(p))
	if err != nil {
		return r, false, err
	}
	r.re = re
	return r, true, nil
}

// globRegexp is the regular expression for the pattern p (without its
// leading '!' or '\' and its trailing '/'): anchored at the root when p
// has a '/', else matching a name at any depth.
func globRegexp(p string) string {
	anchored := strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '*' && strings.HasPrefix(p[i:], "**"):
			i = writeDoubleStar(&b, p, i)
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			i = writeClass(&b, p, i)
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return b.String()
}

// writeDoubleStar writes the expression for the "**" at p[i] to b and
// returns the index of the last byte of p it consumed.
func writeDoubleStar(b *strings.Builder, p string, i int) int {
	atStart := i == 0 || p[i-1] == '/'
	rest := p[i+2:]
	switch {
	case atStart && strings.HasPrefix(rest, "/"):
		b.WriteString("(?:.*/)?") // "**/": any leading directories
		return i + 2
	case atStart && rest == "":
		b.WriteString(".*") // "/**": everything inside
		return i + 1
	default:
		b.WriteString("[^/]*")
		return i + 1
	}
}

// writeClass writes the expression for the class "[...]" that opens at
// p[i] to b and returns the index of its closing ']'; a '[' that is not
// closed is written as a literal and i returned.
func writeClass(b *strings.Builder, p string, i int) int {
	j := strings.IndexByte(p[i+1:], ']')
	if j < 0 {
		b.WriteString(`\[`)
		return i
	}
	class := p[i+1 : i+1+j]
	if class == "" {
		// "[]...]": a ']' first is part of the class.
		k := strings.IndexByte(p[i+2:], ']')
		if k < 0 {
			b.WriteString(`\[`)
			return i
		}
		class = p[i+1 : i+2+k]
		j = k + 1
	}
	if class[0] == '!' {
		class = "^" + class[1:]
	}
	b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
	return i + j + 1
}

// match reports whether the patterns exclude rel itself (not considering
// its parents).
func (ig *Ignore) match(rel string, isDir bool) bool {
	ignored := false
	for _, r := range ig.rules {
		if r.dirOnly && !isDir {
			continue
		}
		if r.re.MatchString(rel) {
			ignored = !r.negate
		}
	}
	return ignored
}

// Ignored reports whether the file or directory rel ('/'-separated,
// relative to the history's root) is left out of the history: it, or a
// directory above it, is matched, or it lies in an ascmhl folder.
func (ig *Ignore) Ignored(rel string, isDir bool) bool {
	els := strings.Split(rel, "/")
	for i := range els {
		last := i == len(els)-1
		dir := !last || isDir
		if dir && els[i] == historyDir {
			return true
		}
		if ig.match(strings.Join(els[:i+1], "/"), dir) {
			return true
		}
	}
	return false
}
