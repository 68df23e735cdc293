package main

import (
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"
)

// typedPaths is whether messages show quoted paths as the user types them
// (typedQuotes): on Windows, where every path has backslashes and %q,
// which the messages quote paths with, doubles each one.
var typedPaths = runtime.GOOS == "windows"

// typedQuotes rewrites each Go-quoted string in s (as %q makes it) whose
// text is printable UTF-8 without a double quote as that text between
// plain double quotes: "C:\\Users\\me" becomes "C:\Users\me". One with a
// control character, a byte that is not UTF-8 or a quote keeps its Go
// quoting, which makes those visible. Text that is no Go string literal
// is left as it is.
func typedQuotes(s string) string {
	if !strings.Contains(s, `\\`) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		lit, err := strconv.QuotedPrefix(s)
		if err != nil {
			b.WriteByte('"')
			s = s[1:]
			continue
		}
		s = s[len(lit):]
		text, err := strconv.Unquote(lit)
		if err != nil || !plainText(text) {
			b.WriteString(lit)
			continue
		}
		b.WriteByte('"')
		b.WriteString(text)
		b.WriteByte('"')
	}
}

// plainText reports whether s shows as itself between double quotes.
func plainText(s string) bool {
	if !utf8.ValidString(s) || strings.ContainsRune(s, '"') {
		return false
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
