package namefold

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b      string
		normalise bool
		same      bool
	}{
		{"README", "readme", false, true},
		{"ReadMe.TXT", "readme.txt", false, true},
		{"a", "b", false, false},
		{"\u00c9t\u00e9", "\u00e9T\u00c9", false, true},           // É and é
		{"\u01c4", "\u01c5", false, true},                         // Ǆ and ǅ
		{"\u01c6", "\u01c5", false, true},                         // ǆ and ǅ
		{"\u017f", "S", false, true},                              // long s
		{"\u212a", "k", false, true},                              // Kelvin sign
		{"\u0131", "i", false, true},                              // dotless i upper-cases to I
		{"\u00e9", "e\u0301", false, false},                       // normalisation forms differ
		{"\u00e9", "e\u0301", true, true},                         // unless normalised
		{"\u00c9", "e\u0301", true, true},                         // both at once
		{"\xff", "\xfe", false, false},                            // not UTF-8: kept as bytes
		{"a\xffb", "A\xffB", false, true},                         // around invalid bytes
		{"\u00df", "SS", false, false},                            // full folding is not simple folding
		{"\u0130", "i", false, false},                             // I with a dot upper-cases to itself, i to I
		{"\u03c3", "\u03c2", false, true},                         // σ and final ς
		{"\u0391\u0392", "\u03b1\u03b2", false, true},             // Greek
		{"\u0410\u0431\u0432", "\u0430\u0411\u0412", false, true}, // Cyrillic
	} {
		ka, kb := Key(c.a, c.normalise), Key(c.b, c.normalise)
		if (ka == kb) != c.same {
			t.Errorf("Key(%q) = %q, Key(%q) = %q (normalise %v): same %v, want %v", c.a, ka, c.b, kb, c.normalise, ka == kb, c.same)
		}
	}
}

// FuzzKey checks that a key is its own key, and that a name shares its key
// with its upper-case form and with its lower-case form where that form
// upper-cases as the name does.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"README", "\u00e9t\u00e9", "\u01c5a", "\xff", "a\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, norm := range []bool{false, true} {
			k := Key(s, norm)
			if k != Key(k, norm) {
				t.Errorf("Key(%q) = %q is not its own key", s, k)
			}
			if u := strings.ToUpper(s); utf8.ValidString(s) && Key(u, norm) != k {
				t.Errorf("Key(%q) = %q, but Key(%q) = %q", s, k, u, Key(u, norm))
			}
			// A lower-case form that does not map back ("\u0130", I with a
			// dot, lowers to "i", which uppers to "I") is another name on
			// a filesystem that compares upper-cased names.
			if l := strings.ToLower(s); utf8.ValidString(s) && strings.ToUpper(l) == strings.ToUpper(s) && Key(l, norm) != k {
				t.Errorf("Key(%q) = %q, but Key(%q) = %q", s, k, l, Key(l, norm))
			}
		}
	})
}
