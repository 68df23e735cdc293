package destfs_test

import (
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/destfs"
)

// TestEncodeName checks the look-alike table of docs/design.md entry by
// entry, and that each encoded name decodes back.
func TestEncodeName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, enc string }{
		{"plain.txt", "plain.txt"},
		{`we:ird?.txt`, "we\uFF1Aird\uFF1F.txt"},
		{`a"b*c<d>e\f|g`, "a\uFF02b\uFF0Ac\uFF1Cd\uFF1Ee\uFF3Cf\uFF5Cg"},
		{"tab\there\x01\x1f", "tab\u2409here\u2401\u241F"},
		{"ends.", "ends\uFF0E"},
		{"ends ", "ends\u2420"},
		{"a. .", "a. \uFF0E"},
		{".hidden", ".hidden"},
		{" lead", " lead"},
		{"CON", "\uFF23ON"},
		{"con.txt", "\uFF43on.txt"},
		{"Nul.tar.gz", "\uFF2Eul.tar.gz"},
		{"lpt9", "\uFF4Cpt9"},
		{"COM0", "COM0"},               // not reserved
		{"CONSOLE", "CONSOLE"},         // nor this
		{"a\uFF1Ab", "a\u201B\uFF1Ab"}, // a look-alike of its own is quoted
		{"\uFF23ON", "\u201B\uFF23ON"},
		{"\u201B", "\u201B\u201B"},
		{"x\u2420", "x\u201B\u2420"},
		{"bad\xffbyte:", "bad\uF7FFbyte\uFF1A"},
		{"lat\xe9in", "lat\uF7E9in"},
		{"\uF7E9", "\u201B\uF7E9"},
		{"ok\uFFFD", "ok\uFFFD"}, // U+FFFD itself is UTF-8
	} {
		got := destfs.EncodeName(tt.name)
		if got != tt.enc {
			t.Errorf("EncodeName(%q) = %q, want %q", tt.name, got, tt.enc)
		}
		if back := destfs.DecodeName(got); back != tt.name {
			t.Errorf("DecodeName(%q) = %q, want %q", got, back, tt.name)
		}
		if rule := destfs.WindowsRule(got); rule != "" {
			t.Errorf("EncodeName(%q) = %q, which breaks a rule: %s", tt.name, got, rule)
		}
	}
}

// TestWindowsRule checks each rule of Windows' names on a name that breaks
// only it, and names that break none.
func TestWindowsRule(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, rule string }{
		{"we:ird.txt", `name contains ':'`},
		{"a|b", `name contains '|'`},
		{`a\b`, `name contains '\\'`},
		{"a\x1bb", `name contains the control character '\x1b'`},
		{"dot.", "name ends with a dot"},
		{"space ", "name ends with a space"},
		{"aux", `name is the reserved device name "aux"`},
		{"PRN.log.1", `name is the reserved device name "PRN"`},
		{"Com7.x", `name is the reserved device name "Com7"`},
		{"ok.txt", ""},
		{" lead", ""},
		{"COM10", ""},
		{"a\x7fb", ""},
		{"a\uFF1Ab", ""},
		{"lat\xe9in", "name is not UTF-8 (byte 0xe9)"},
		{"ok\uFFFD", ""},
	} {
		if got := destfs.WindowsRule(tt.name); got != tt.rule {
			t.Errorf("WindowsRule(%q) = %q, want %q", tt.name, got, tt.rule)
		}
	}
}

// TestNamesModeSet checks that the mode parses itself, as a flag's value.
func TestNamesModeSet(t *testing.T) {
	t.Parallel()
	var m destfs.NamesMode
	if m.String() != "strict" {
		t.Errorf("zero NamesMode is %q, want strict", m.String())
	}
	for _, s := range []string{"strict", "encode", "decode"} {
		if err := m.Set(s); err != nil || m.String() != s {
			t.Errorf("Set(%q): %v, mode %q", s, err, m)
		}
	}
	if err := m.Set("windows"); err == nil || !strings.Contains(err.Error(), `"windows"`) {
		t.Errorf("Set(windows) = %v, want an error naming it", err)
	}
}

// FuzzNameEncoding checks that every name survives encoding and decoding,
// and that no encoded name breaks a rule of Windows' names.
func FuzzNameEncoding(f *testing.F) {
	for _, s := range []string{"a:b", "CON", "x.", "x ", "\u201B\uFF1A", "\uFF1A", "a\x01", "\xff", "nul.", "\u201B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || strings.ContainsAny(name, "/\x00") {
			return // no file has such a name
		}
		enc := destfs.EncodeName(name)
		if back := destfs.DecodeName(enc); back != name {
			t.Fatalf("DecodeName(EncodeName(%q)) = %q (encoded %q)", name, back, enc)
		}
		if rule := destfs.WindowsRule(enc); rule != "" {
			t.Fatalf("EncodeName(%q) = %q breaks a rule: %s", name, enc, rule)
		}
		if destfs.EncodeName(destfs.DecodeName(enc)) != enc {
			t.Fatalf("encoding %q is not stable", name)
		}
	})
}
