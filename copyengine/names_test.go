package copyengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
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
		got := copyengine.EncodeName(tt.name)
		if got != tt.enc {
			t.Errorf("EncodeName(%q) = %q, want %q", tt.name, got, tt.enc)
		}
		if back := copyengine.DecodeName(got); back != tt.name {
			t.Errorf("DecodeName(%q) = %q, want %q", got, back, tt.name)
		}
		if rule := copyengine.WindowsRule(got); rule != "" {
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
		if got := copyengine.WindowsRule(tt.name); got != tt.rule {
			t.Errorf("WindowsRule(%q) = %q, want %q", tt.name, got, tt.rule)
		}
	}
}

// TestNamesModeSet checks that the mode parses itself, as a flag's value.
func TestNamesModeSet(t *testing.T) {
	t.Parallel()
	var m copyengine.NamesMode
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
		enc := copyengine.EncodeName(name)
		if back := copyengine.DecodeName(enc); back != name {
			t.Fatalf("DecodeName(EncodeName(%q)) = %q (encoded %q)", name, back, enc)
		}
		if rule := copyengine.WindowsRule(enc); rule != "" {
			t.Fatalf("EncodeName(%q) = %q breaks a rule: %s", name, enc, rule)
		}
		if copyengine.EncodeName(copyengine.DecodeName(enc)) != enc {
			t.Fatalf("encoding %q is not stable", name)
		}
	})
}

// TestNamesModeRefused checks that Run, not only the flag, refuses a mode
// it does not know, before writing anything.
func TestNamesModeRefused(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	dst := filepath.Join(t.TempDir(), "dst")
	_, err := copyengine.Run(context.Background(), copyengine.Options{Sources: []string{src}, Dest: dst, Names: "windows"})
	var re *copyengine.RefusalError
	if !errors.As(err, &re) {
		t.Fatalf("Run with Names %q: %v, want a RefusalError", "windows", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("the refused run created %s", dst)
	}
}

// TestDecodeCollision checks that a decode that would put two source names
// on one destination name fails the second on its own, the name already
// right winning, and that an excluded name takes no part.
func TestDecodeCollision(t *testing.T) {
	t.Parallel()
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "a:b"), []byte("ascii"))
	writeFile(t, filepath.Join(src, "a\uFF1Ab"), []byte("fullwidth"))
	writeFile(t, filepath.Join(src, "c:d"), []byte("excluded"))
	writeFile(t, filepath.Join(src, "c\uFF1Ad"), []byte("kept"))
	dst := filepath.Join(scratchDir(t), "dst")
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Names: copyengine.NamesDecode, Excludes: []string{"c:d"}})
	if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 || sum.Failures[0].Path != "a\uFF1Ab" {
		t.Fatalf("err %v, failures %v; want one, of %q", err, sum.Failures, "a\uFF1Ab")
	}
	for name, want := range map[string]string{"a:b": "ascii", "c:d": "kept"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", name, b, err, want)
		}
	}
}
