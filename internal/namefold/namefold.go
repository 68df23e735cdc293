// Package namefold says which file names a case-insensitive filesystem may
// take for one: exFAT and NTFS compare names through an up-case table stored
// on the volume, ext4 and f2fs with casefold (a directory attribute) through
// Unicode case folding after normalisation, APFS and HFS+ through
// normalisation and, by default, case folding.
//
// Key is deliberately broad: two names such a filesystem holds as one have
// the same Key, and a few names with the same Key may still be two names on
// a given filesystem (its table is older, or leaves a letter out). Callers
// group names by Key and ask the filesystem itself about each group (see
// copyengine's fold probe), or, where they cannot ask, take the group as one
// name, which fails a file rather than losing one.
package namefold

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Key returns name with each character replaced by a representative of its
// case: the smallest character of the simple case-folding orbit of its
// upper case, so that "README", "readme" and "ReadMe" share one key, and so
// do "ǅ", "ǆ" and "Ǆ", "ſ" and "s", "ı" and "i" (an up-case table maps
// both to "I"). With normalise, name is first decomposed (NFD), as macOS
// and ext4 casefold compare names, so that "é" written as one character or
// as "e" and a combining accent share a key. Bytes that are not UTF-8 are
// kept as they are: no filesystem folds them.
func Key(name string, normalise bool) string {
	if normalise && utf8.ValidString(name) {
		name = norm.NFD.String(name)
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && n <= 1 {
			b.WriteByte(name[i])
			i++
			continue
		}
		b.WriteRune(canon(r))
		i += n
	}
	return b.String()
}

// canon is the representative of r's case.
func canon(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		// 'K' and 'S' share orbits with the Kelvin sign and the long s,
		// whose representatives are these letters themselves.
		return r
	}
	u := unicode.ToUpper(r)
	m := u
	for f := unicode.SimpleFold(u); f != u; f = unicode.SimpleFold(f) {
		// A combining mark never stands for a letter's orbit (iota's holds
		// U+0345, the combining ypogegrammeni): normalising would move it
		// among the marks after it, and the key would not be its own key.
		if unicode.Is(unicode.Mn, f) && !unicode.Is(unicode.Mn, m) {
			continue
		}
		if unicode.Is(unicode.Mn, m) && !unicode.Is(unicode.Mn, f) || f < m {
			m = f
		}
	}
	return m
}
