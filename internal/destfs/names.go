package destfs

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// NamesMode says what a run does with a name the destination cannot hold
// (see docs/design.md, "Names the destination cannot hold"). It is a
// pflag.Value: Set parses and validates, so a flag and a library caller get
// the same checks.
type NamesMode string

// The --names modes.
const (
	// NamesStrict fails each file whose name the destination cannot hold,
	// before any byte of it is written, saying which rule the name breaks.
	NamesStrict NamesMode = "strict"
	// NamesEncode writes every name in the look-alike encoding
	// (EncodeName), whatever the destination: a name Windows cannot hold
	// gets look-alike characters instead, and NamesDecode gives back every
	// name exactly, without having to know which filesystem the tree went
	// to.
	NamesEncode NamesMode = "encode"
	// NamesDecode undoes NamesEncode: each source name is decoded
	// (DecodeName) before it is written, so that a tree copied to a USB
	// stick with NamesEncode comes back with its own names.
	NamesDecode NamesMode = "decode"
)

// String returns the mode's name ("strict" for the zero value).
func (m NamesMode) String() string {
	if m == "" {
		return string(NamesStrict)
	}
	return string(m)
}

// Set parses s as a mode: strict, encode or decode.
func (m *NamesMode) Set(s string) error {
	switch v := NamesMode(s); v {
	case NamesStrict, NamesEncode, NamesDecode:
		*m = v
		return nil
	}
	return fmt.Errorf("must be strict, encode or decode, not %q", s)
}

// Type names the value's kind for help text.
func (m *NamesMode) Type() string { return "mode" }

// DestName returns the function that maps a source name to the name its
// copy has in a destination written in mode m (for treeverify.TreeOptions),
// nil for strict, which keeps names.
func (m NamesMode) DestName() func(string) string {
	switch m {
	case NamesEncode:
		return EncodeName
	case NamesDecode:
		return DecodeName
	}
	return nil
}

// NameRules are the rules for names on one destination filesystem: which
// names it cannot hold (learned by Info.NameRulesOf). The zero value, and
// nil, forbid nothing.
type NameRules struct {
	fs string // the filesystem as messages name it: "exFAT", "FAT", "NTFS"
	// windows: the rules of Windows' names, which FAT, exFAT and NTFS
	// mounted with windows_names share: no "*:<>?\| or control
	// character, no final dot or space, no reserved device name.
	windows bool
	// ascii: printable ASCII only (fusefat writes no other long name).
	ascii bool
	// utf8: names must be UTF-8, as where they are stored as UTF-16 (NTFS
	// without windows_names); implied by windows.
	utf8 bool
}

func (r *NameRules) restricts() bool { return r != nil && (r.windows || r.ascii || r.utf8) }

// NameError is the per-file failure of a name that the destination cannot
// hold.
type NameError struct {
	Rule string // the rule broken: "name contains ':'", "name ends with a space", ...
	FS   string // the filesystem that cannot store it
	Hint string // what to do, "" when nothing fastcopy offers helps
}

func (e *NameError) Error() string {
	msg := e.Rule + " which " + e.FS + " cannot store"
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// windowsForbidden are the printable characters no name may hold on
// Windows, with their look-alikes: the FULLWIDTH forms.
const windowsForbidden = "\"*:<>?\\|"

// reservedNames are the device names Windows reserves, with or without an
// extension, in any case.
var reservedNames = func() map[string]bool {
	m := map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true}
	for i := '1'; i <= '9'; i++ {
		m["COM"+string(i)] = true
		m["LPT"+string(i)] = true
	}
	return m
}()

// reservedName reports whether name is a reserved device name: its part
// before the first dot is one, in any case ("con", "NUL.tar.gz").
func reservedName(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	return len(base) >= 3 && len(base) <= 4 && reservedNames[strings.ToUpper(base)]
}

// WindowsRule returns the rule of Windows' names that name breaks, "" when
// none.
func WindowsRule(name string) string {
	for i, r := range name {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(name[i:], "\uFFFD"):
			// Names are UTF-16 there: the bytes of a Latin-1 name are not.
			return fmt.Sprintf("name is not UTF-8 (byte %#x)", name[i])
		case r < 0x20:
			return fmt.Sprintf("name contains the control character %q", r)
		case r < utf8.RuneSelf && strings.ContainsRune(windowsForbidden, r):
			return fmt.Sprintf("name contains %q", r)
		}
	}
	switch {
	case strings.HasSuffix(name, "."):
		return "name ends with a dot"
	case strings.HasSuffix(name, " "):
		return "name ends with a space"
	case reservedName(name):
		base, _, _ := strings.Cut(name, ".")
		return fmt.Sprintf("name is the reserved device name %q", base)
	}
	return ""
}

// asciiRule returns the rule name breaks on a filesystem that takes only
// printable ASCII, "" when none.
func asciiRule(name string) string {
	for i, r := range name {
		if r < 0x20 || r > 0x7e {
			if r == utf8.RuneError {
				return fmt.Sprintf("name contains the byte %#x, not printable ASCII,", name[i])
			}
			return fmt.Sprintf("name contains %q, not printable ASCII,", r)
		}
	}
	return ""
}

// check returns nil when the filesystem can hold name, else the rule it
// breaks. encoded says name is EncodeName's output already.
func (r *NameRules) check(name string, encoded bool) error {
	if !r.restricts() {
		return nil
	}
	if r.windows {
		if rule := WindowsRule(name); rule != "" {
			hint := "use --names=encode"
			if r.ascii {
				hint = "" // the look-alikes are not ASCII
			}
			return &NameError{Rule: rule, FS: r.fs, Hint: hint}
		}
	}
	if r.utf8 && !utf8.ValidString(name) {
		i := 0
		for i < len(name) {
			c, size := utf8.DecodeRuneInString(name[i:])
			if c == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return &NameError{Rule: fmt.Sprintf("name is not UTF-8 (byte %#x)", name[i]), FS: r.fs, Hint: "use --names=encode"}
	}
	if r.ascii {
		if rule := asciiRule(name); rule != "" {
			hint := ""
			if encoded {
				hint = "--names=encode cannot help: its look-alike characters are not ASCII"
			}
			return &NameError{Rule: rule, FS: r.fs, Hint: hint}
		}
	}
	return nil
}

// Map maps the source name to the name it gets on the destination, or
// returns the rule it breaks there. rules gives the destination's rules; it
// is asked only for a name that breaks one of some filesystem, so that a
// run of ordinary names never probes.
func (m NamesMode) Map(rules func() *NameRules, name string) (string, error) {
	encoded := false
	switch m {
	case NamesDecode:
		dec := DecodeName(name)
		if dec == "." || dec == ".." {
			// "．" names a file on Windows; its decoding names none.
			return "", fmt.Errorf("name decodes to %q, which no file can be named", dec)
		}
		name = dec
	case NamesEncode:
		name, encoded = EncodeName(name), true
	}
	if WindowsRule(name) == "" && asciiRule(name) == "" {
		return name, nil
	}
	return name, rules().check(name, encoded)
}

// The look-alike encoding of names for filesystems with Windows' rules. Each
// character a name may not hold there becomes a look-alike, the convention
// rclone's local backend uses:
//
//	" * : < > ? \ |      FULLWIDTH forms U+FF02 U+FF0A U+FF1A U+FF1C U+FF1E U+FF1F U+FF3C U+FF5C
//	control 0x01-0x1F    SYMBOL FOR forms U+2401-U+241F
//	final .              FULLWIDTH FULL STOP U+FF0E
//	final space          SYMBOL FOR SPACE U+2420
//	reserved device name its first letter in its FULLWIDTH form: "CON.txt" -> "ＣON.txt"
//	byte b, not UTF-8    U+F700 + b (U+F780-U+F7FF, private use): the names are UTF-16
//
// and, so that decoding is unambiguous, every look-alike the name holds
// already (any of those above, and the FULLWIDTH forms of C, P, A, N, L in
// either case, and U+F780-U+F7FF) and the quote itself get the quote
// U+201B (SINGLE
// HIGH-REVERSED-9 QUOTATION MARK) in front. DecodeName(EncodeName(s)) == s
// for every s, and EncodeName's output breaks none of Windows' rules.
const (
	quoteRune  = '\u201B'
	fullOffset = 0xFEE0 // printable ASCII + fullOffset = its FULLWIDTH form
	symbolBase = 0x2400 // control character + symbolBase = its SYMBOL FOR form
	symbolDot  = '\uFF0E'
	symbolSp   = '\u2420'
	byteBase   = 0xF700 // a byte b that is not UTF-8 + byteBase: U+F780-U+F7FF, private use
)

// reservedInitials are the first letters of the reserved device names.
const reservedInitials = "CPANLcpanl"

// lookAlike reports the character r stands for when it is one of the
// encoding's look-alikes.
func lookAlike(r rune) (rune, bool) {
	switch {
	case r == symbolDot:
		return '.', true
	case r == symbolSp:
		return ' ', true
	case r > symbolBase && r < symbolBase+0x20:
		return r - symbolBase, true
	case r > fullOffset && r-fullOffset < utf8.RuneSelf:
		a := r - fullOffset
		if strings.ContainsRune(windowsForbidden, a) || strings.ContainsRune(reservedInitials, a) {
			return a, true
		}
	}
	return 0, false
}

// EncodeName returns name in the look-alike encoding (see above): what a
// file of that name is called under --names=encode.
func EncodeName(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 8)
	reserved := reservedName(name)
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		last := i+size == len(name)
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(byteBase + rune(name[i]))
		case r == quoteRune:
			b.WriteRune(quoteRune)
			b.WriteRune(r)
		case isLookAlike(r):
			b.WriteRune(quoteRune)
			b.WriteRune(r)
		case r > 0 && r < 0x20:
			b.WriteRune(symbolBase + r)
		case r < utf8.RuneSelf && strings.ContainsRune(windowsForbidden, r):
			b.WriteRune(r + fullOffset)
		case last && r == '.':
			b.WriteRune(symbolDot)
		case last && r == ' ':
			b.WriteRune(symbolSp)
		case i == 0 && reserved:
			b.WriteRune(r + fullOffset)
		default:
			b.WriteString(name[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isLookAlike(r rune) bool {
	_, ok := lookAlike(r)
	return ok || isByteRune(r)
}

// isByteRune reports whether r stands for a byte that is not UTF-8.
func isByteRune(r rune) bool { return r >= byteBase+0x80 && r <= byteBase+0xFF }

// DecodeName undoes EncodeName: a quoted character is itself, a look-alike
// is the character it stands for. Names EncodeName did not make decode too
// (a look-alike typed on Windows becomes its ASCII character), so decode
// only trees that were encoded.
func DecodeName(name string) string {
	if !strings.ContainsFunc(name, func(r rune) bool { return r == quoteRune || isLookAlike(r) }) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == quoteRune && i+size < len(name) {
			i += size
			r, size = utf8.DecodeRuneInString(name[i:])
			b.WriteString(name[i : i+size])
		} else if a, ok := lookAlike(r); ok {
			b.WriteRune(a)
		} else if isByteRune(r) {
			b.WriteByte(byte(r - byteBase))
		} else {
			b.WriteString(name[i : i+size])
		}
		i += size
	}
	return b.String()
}
