package preflight

import (
	"fmt"
	"strings"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/readorder"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Reflink says when the data path may clone blocks instead of copying them.
// It is a pflag.Value: Set parses and validates, so a flag and a library
// caller get the same checks.
type Reflink string

// The --reflink modes.
const (
	ReflinkAuto   Reflink = "auto"   // clone where source and destination share a filesystem that can
	ReflinkAlways Reflink = "always" // clone or fail the file
	ReflinkNever  Reflink = "never"  // always write independent blocks
)

// String returns the mode's name ("auto" for the zero value).
func (r Reflink) String() string {
	if r == "" {
		return string(ReflinkAuto)
	}
	return string(r)
}

// Set parses s as a mode: auto, always or never.
func (r *Reflink) Set(s string) error {
	switch v := Reflink(s); v {
	case ReflinkAuto, ReflinkAlways, ReflinkNever:
		*r = v
		return nil
	}
	return fmt.Errorf("must be auto, always or never, not %q", s)
}

// Type names the value's kind for help text.
func (r *Reflink) Type() string { return "mode" }

// Options are the option values of a run whose modes and combinations
// CheckOptions checks: the modes, the numbers and the paths as given.
type Options struct {
	Reflink  Reflink
	Verify   outcome.VerifyMode
	Dedup    dedup.Mode
	Names    destfs.NamesMode
	BwLimit  int64    // bytes per second, 0 for no limit
	Jobs     int      // 0 chooses
	Sources  []string // the SOURCEs
	Dest     string
	LinkDest []string
}

// CheckOptions sets each mode left empty to its default (--reflink=auto,
// --verify=device, --dedup=auto, --names=strict) and refuses, with a
// *refusal.Error, a mode no flag knows, --dedup=clone with
// --reflink=never, a --bwlimit below 0, a negative --jobs, an empty path.
// It reads o and changes nothing but its empty modes.
func CheckOptions(o *Options) error {
	if o.Reflink == "" {
		o.Reflink = ReflinkAuto
	}
	if o.Verify == "" {
		o.Verify = outcome.VerifyDevice
	}
	if o.Dedup == "" {
		o.Dedup = dedup.Auto
	}
	if o.Names == "" {
		o.Names = destfs.NamesStrict
	}
	if err := o.Reflink.Set(string(o.Reflink)); err != nil {
		return refusal.New(string(o.Reflink), "is not a --reflink mode: "+err.Error(), "use auto, always or never")
	}
	if err := o.Verify.Set(string(o.Verify)); err != nil {
		return refusal.New(string(o.Verify), "is not a --verify mode: "+err.Error(), "use device, cache or off")
	}
	if err := o.Dedup.Set(string(o.Dedup)); err != nil {
		return refusal.New(string(o.Dedup), "is not a --dedup mode: "+err.Error(), "use auto, clone, hardlink or off")
	}
	if err := o.Names.Set(string(o.Names)); err != nil {
		return refusal.New(string(o.Names), "is not a --names mode: "+err.Error(), "use strict, encode or decode")
	}
	return o.checkValues()
}

// checkValues refuses the combinations and the values no mode parses.
func (o *Options) checkValues() error {
	if o.Dedup == dedup.Clone && o.Reflink == ReflinkNever {
		return &refusal.Error{Msg: "--dedup=clone needs clones, which --reflink=never forbids; use --dedup=hardlink or --dedup=off"}
	}
	if o.BwLimit < 0 {
		return &refusal.Error{Msg: fmt.Sprintf("--bwlimit must be above 0, not %d", o.BwLimit), Hint: "give bytes per second, such as 4M"}
	}
	if o.Jobs < 0 {
		return &refusal.Error{Msg: fmt.Sprintf("--jobs must be 1 or more, not %d", o.Jobs)}
	}
	for _, p := range o.Sources {
		if strings.TrimSpace(p) == "" {
			return &refusal.Error{Msg: "an argument is empty; name a path"}
		}
	}
	if len(o.Sources) > 0 && strings.TrimSpace(o.Dest) == "" {
		return &refusal.Error{Msg: "an argument is empty; name a path"}
	}
	for _, d := range o.LinkDest {
		if strings.TrimSpace(d) == "" {
			return &refusal.Error{Msg: "--link-dest is empty; name a directory that holds an earlier copy"}
		}
	}
	return nil
}

// CheckOrder refuses an --order no read order knows; "" is left to be
// chosen.
func CheckOrder(o *readorder.Order) error {
	if *o == "" {
		return nil
	}
	if err := o.Set(string(*o)); err != nil {
		return refusal.New(string(*o), "is not an --order: "+err.Error(), "use auto, disk, inode or listing")
	}
	return nil
}
