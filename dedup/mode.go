package dedup

import "fmt"

// Mode is the --dedup setting. It is a pflag.Value: Set parses and
// validates, so a flag and a library caller get the same checks.
type Mode string

// The --dedup modes.
const (
	Auto     Mode = "auto"     // clone where the destination can, otherwise hard-link
	Clone    Mode = "clone"    // reflink only; where it cannot, copy
	Hardlink Mode = "hardlink" // hard-link files whose preserved metadata is identical too
	Off      Mode = "off"
)

// String returns the mode's name ("auto" for the zero value).
func (m Mode) String() string {
	if m == "" {
		return string(Auto)
	}
	return string(m)
}

// Set parses s as a mode: auto, clone, hardlink or off.
func (m *Mode) Set(s string) error {
	switch v := Mode(s); v {
	case Auto, Clone, Hardlink, Off:
		*m = v
		return nil
	}
	return fmt.Errorf("must be auto, clone, hardlink or off, not %q", s)
}

// Type names the value's kind for help text.
func (m *Mode) Type() string { return "mode" }
