package filter

// wildmatch reports whether text matches the glob pattern p as git's
// wildmatch does (wildmatch.c, the matcher behind .gitignore). With
// pathname (WM_PATHNAME), "*", "?" and "[...]" never match a "/", and
// "**" between slashes (or at either end) matches any number of
// directories; without it "*" and "**" match anything.
//
// The rules, byte by byte, as git's: "\" quotes the next byte (a final
// "\" matches nothing); "[...]" takes "!" or "^" to negate, ranges,
// "\"-quoted bytes and the POSIX classes "[:alpha:]" and the like, a "]"
// first is literal; an unclosed "[" or an unknown class matches nothing.
// Bytes are compared as they are (no case folding, core.ignoreCase off).
func wildmatch(p, text string, pathname bool) bool {
	return dowild(p, text, pathname) == wmMatch
}

type wmResult int8

const (
	wmMatch wmResult = iota
	wmNoMatch
	wmAbortAll        // no later position of the text can match either
	wmAbortToStarStar // no position up to the next "/" can match
)

func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// dowild matches text against p byte by byte: a literal byte, "\" and
// "?" here, a star (which ends the match one way or the other) in
// matchStar, a set in matchBracket.
func dowild(p, text string, pathname bool) wmResult {
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		var tc byte
		if ti < len(text) {
			tc = text[ti]
		} else if pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '\\':
			pi++
			if pi >= len(p) || tc != p[pi] {
				return wmNoMatch // a final "\" matches nothing
			}
		default:
			if tc != pc {
				return wmNoMatch
			}
		case '?':
			if pathname && tc == '/' {
				return wmNoMatch
			}
		case '*':
			return matchStar(p, pi, text[ti:], pathname)
		case '[':
			var r wmResult
			if pi, r = matchBracket(p, pi, tc, pathname); r != wmMatch {
				return r
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// matchStar matches t against the pattern p from the star at p[pi]: one
// "*", or a run of them, which with pathname is "**" (matching slashes
// too) when it stands between slashes or at an end.
func matchStar(p string, pi int, t string, pathname bool) wmResult {
	matchSlash := !pathname
	pi++
	if pi < len(p) && p[pi] == '*' {
		start := pi - 1
		for pi < len(p) && p[pi] == '*' {
			pi++
		}
		if pathname {
			if (start == 0 || p[start-1] == '/') &&
				(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/')) {
				// "**/" matches no directory at all, or any
				// run of them: try none first.
				if pi < len(p) && p[pi] == '/' && dowild(p[pi+1:], t, pathname) == wmMatch {
					return wmMatch
				}
				matchSlash = true
			}
		}
	}
	return matchAfterStar(p[pi:], t, matchSlash, pathname)
}

// matchAfterStar matches t against rest, the pattern after a star that
// matches any run of bytes (of a name's bytes only, unless matchSlash):
// it tries rest at each place the star could end.
func matchAfterStar(rest, t string, matchSlash, pathname bool) wmResult {
	if rest == "" {
		// A final "**" matches everything; a final "*" only
		// what holds no more slashes.
		if !matchSlash {
			for i := 0; i < len(t); i++ {
				if t[i] == '/' {
					return wmNoMatch
				}
			}
		}
		return wmMatch
	}
	if !matchSlash && rest[0] == '/' {
		// One "*" then a slash: the rest of this name.
		i := 0
		for i < len(t) && t[i] != '/' {
			i++
		}
		if i == len(t) {
			return wmNoMatch
		}
		return dowild(rest, t[i:], pathname)
	}
	for k := 0; ; k++ {
		if k >= len(t) {
			return wmAbortAll
		}
		if !isGlobSpecial(rest[0]) {
			// Skip ahead to the next place the literal that
			// follows the star can match.
			for k < len(t) && (matchSlash || t[k] != '/') && t[k] != rest[0] {
				k++
			}
			if k >= len(t) || t[k] != rest[0] {
				if matchSlash {
					return wmAbortToStarStar
				}
				return wmNoMatch
			}
		}
		m := dowild(rest, t[k:], pathname)
		if m != wmNoMatch {
			if !matchSlash || m != wmAbortToStarStar {
				return m
			}
		} else if !matchSlash && t[k] == '/' {
			return wmAbortToStarStar
		}
	}
}

// matchBracket matches tc against the set "[...]" that opens at p[pi]. It
// returns the index of the set's closing "]" and wmMatch when tc is in
// the set (out of it when negated), or the result that ends the match.
func matchBracket(p string, pi int, tc byte, pathname bool) (int, wmResult) {
	pi++
	if pi >= len(p) {
		return pi, wmAbortAll
	}
	c := p[pi]
	if c == '^' {
		c = '!'
	}
	negated := c == '!'
	if negated {
		pi++
		if pi >= len(p) {
			return pi, wmAbortAll
		}
		c = p[pi]
	}
	var prev byte
	matched := false
	for {
		var in bool
		var r wmResult
		if pi, c, in, r = bracketItem(p, pi, c, prev, tc); r != wmMatch {
			return pi, r
		}
		if in {
			matched = true
		}
		prev = c
		pi++
		if pi >= len(p) {
			return pi, wmAbortAll // unclosed
		}
		c = p[pi]
		if c == ']' {
			break
		}
	}
	if matched == negated || (pathname && tc == '/') {
		return pi, wmNoMatch
	}
	return pi, wmMatch
}

// bracketItem matches tc against the element of a set that starts at
// p[pi] (c, its first byte; prev, the byte a range ending here starts
// from, 0 for none): a "\"-quoted byte, a range, a POSIX class or a
// byte. It returns the index of the element's last byte, the byte a
// range after it would start from, whether tc is in it, and wmAbortAll
// for a set that ends inside it (wmMatch otherwise).
func bracketItem(p string, pi int, c, prev, tc byte) (int, byte, bool, wmResult) {
	switch {
	case c == '\\':
		pi++
		if pi >= len(p) {
			return pi, 0, false, wmAbortAll
		}
		c = p[pi]
		return pi, c, tc == c, wmMatch
	case c == '-' && prev != 0 && pi+1 < len(p) && p[pi+1] != ']':
		pi++
		c = p[pi]
		if c == '\\' {
			pi++
			if pi >= len(p) {
				return pi, 0, false, wmAbortAll
			}
			c = p[pi]
		}
		return pi, 0, tc <= c && tc >= prev, wmMatch // no range starts at the end of one
	case c == '[' && pi+1 < len(p) && p[pi+1] == ':':
		return bracketClass(p, pi, tc)
	}
	return pi, c, tc == c, wmMatch
}

// bracketClass matches tc against the "[:name:]" that starts at p[pi],
// returning as bracketItem does; a "[:" with no ":]" is a plain "[", an
// unknown name wmAbortAll.
func bracketClass(p string, pi int, tc byte) (int, byte, bool, wmResult) {
	s := pi + 2
	j := s
	for j < len(p) && p[j] != ']' {
		j++
	}
	if j >= len(p) {
		return pi, 0, false, wmAbortAll
	}
	if j-s-1 < 0 || p[j-1] != ':' {
		// No ":]": a plain "[" in the set.
		return pi, '[', tc == '[', wmMatch
	}
	in, ok := inClass(p[s:j-1], tc)
	if !ok {
		return pi, 0, false, wmAbortAll // an unknown class
	}
	return j, 0, in, wmMatch
}

// inClass reports whether c is in the POSIX class name (ASCII, as git's
// sane-ctype), and ok false for a name that is no class.
func inClass(name string, c byte) (in, ok bool) {
	upper := c >= 'A' && c <= 'Z'
	lower := c >= 'a' && c <= 'z'
	digit := c >= '0' && c <= '9'
	alpha := upper || lower
	space := c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	print := c >= 0x20 && c < 0x7f
	switch name {
	case "alnum":
		return alpha || digit, true
	case "alpha":
		return alpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return print && c != ' ', true
	case "lower":
		return lower, true
	case "print":
		return print, true
	case "punct":
		return print && c != ' ' && !alpha && !digit, true
	case "space":
		return space, true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
