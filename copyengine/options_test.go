package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/dedup"
)

// TestRunRefusesBadOptions gives Run, without the command line, each
// request the command line used to refuse on its own: Run refuses it with a
// *RefusalError (exit 2 on the command line) in the command line's words,
// before anything is written.
func TestRunRefusesBadOptions(t *testing.T) {
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "a.txt"), []byte("alpha\n"))
	cases := []struct {
		name string
		set  func(o *copyengine.Options)
		want string
	}{
		{"reflink", func(o *copyengine.Options) { o.Reflink = "maybe" },
			`"maybe": is not a --reflink mode: must be auto, always or never, not "maybe"`},
		{"verify", func(o *copyengine.Options) { o.Verify = "sometimes" },
			`"sometimes": is not a --verify mode: must be device, cache or off, not "sometimes"`},
		{"dedup", func(o *copyengine.Options) { o.Dedup = "twice" },
			`"twice": is not a --dedup mode: must be auto, clone, hardlink or off, not "twice"`},
		{"clone-never", func(o *copyengine.Options) { o.Dedup, o.Reflink = dedup.Clone, copyengine.ReflinkNever },
			"--dedup=clone needs clones, which --reflink=never forbids; use --dedup=hardlink or --dedup=off"},
		{"jobs", func(o *copyengine.Options) { o.Jobs = -1 },
			"--jobs must be 1 or more, not -1"},
		{"order", func(o *copyengine.Options) { o.ReadOrder = "sideways" },
			`"sideways": is not an --order: must be auto, disk, inode or listing, not "sideways"`},
		{"blank-source", func(o *copyengine.Options) { o.Sources = []string{" "} },
			"an argument is empty; name a path"},
		{"blank-dest", func(o *copyengine.Options) { o.Dest = " " },
			"an argument is empty; name a path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			opt := copyengine.Options{Sources: []string{src}, Dest: dst}
			c.set(&opt)
			sum, err := runEngine(t, opt)
			var refusal *copyengine.RefusalError
			if !errors.As(err, &refusal) {
				t.Fatalf("Run = %v (copied %d), want a *RefusalError", err, sum.Copied)
			}
			if err.Error() != c.want {
				t.Errorf("refusal %q, want %q", err.Error(), c.want)
			}
			if _, err := os.Lstat(dst); err == nil {
				t.Errorf("the refused run made %s", dst)
			}
		})
	}
}

// TestCheckDefaultsAndJobs: Check fills in every default and chooses the
// workers once; a second Check, and Run, keep that choice, and the summary
// reports it.
func TestCheckDefaultsAndJobs(t *testing.T) {
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "a.txt"), []byte("alpha\n"))
	opt := copyengine.Options{Sources: []string{src}, Dest: filepath.Join(t.TempDir(), "dst")}
	if err := opt.Check(); err != nil {
		t.Fatal(err)
	}
	if opt.Reflink != copyengine.ReflinkAuto || opt.Verify != copyengine.VerifyDevice || opt.Dedup != dedup.Auto ||
		opt.Names != copyengine.NamesStrict || opt.Stats == nil {
		t.Errorf("defaults after Check: reflink %q verify %q dedup %q names %q stats %v", opt.Reflink, opt.Verify, opt.Dedup, opt.Names, opt.Stats)
	}
	if opt.Jobs < 1 || opt.JobsReason == "" {
		t.Fatalf("Check chose %d jobs (%q)", opt.Jobs, opt.JobsReason)
	}
	// A choice the caller made (or an earlier Check) is kept as it is.
	opt.Jobs, opt.JobsReason = 3, "three, for the test"
	if err := opt.Check(); err != nil {
		t.Fatal(err)
	}
	sum, err := runEngine(t, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Jobs != 3 || sum.JobsReason != "three, for the test" {
		t.Errorf("summary reports %d jobs (%q), want the 3 given", sum.Jobs, sum.JobsReason)
	}
}

// TestModesAreFlagValues: each mode parses the words its flag takes and
// refuses others, leaving the value as it was.
func TestModesAreFlagValues(t *testing.T) {
	type value interface {
		String() string
		Set(string) error
		Type() string
	}
	var r copyengine.Reflink
	var v copyengine.VerifyMode
	var d dedup.Mode
	for _, c := range []struct {
		v    value
		zero string
		good []string
	}{
		{&r, "auto", []string{"auto", "always", "never"}},
		{&v, "device", []string{"device", "cache", "off"}},
		{&d, "auto", []string{"auto", "clone", "hardlink", "off"}},
	} {
		if got := c.v.String(); got != c.zero {
			t.Errorf("zero value says %q, want %q", got, c.zero)
		}
		for _, s := range c.good {
			if err := c.v.Set(s); err != nil || c.v.String() != s {
				t.Errorf("Set(%q) = %v, value %q", s, err, c.v.String())
			}
		}
		before := c.v.String()
		if err := c.v.Set("bogus"); err == nil || c.v.String() != before {
			t.Errorf("Set(bogus) = %v, value %q (was %q)", err, c.v.String(), before)
		}
		if c.v.Type() != "mode" {
			t.Errorf("Type() = %q", c.v.Type())
		}
	}
}

// TestCheckReadOrder: Check resolves auto to an order for the source's
// device and says why; an order given is kept, "set by --order"; the
// summary reports what the run used.
func TestCheckReadOrder(t *testing.T) {
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "a.txt"), []byte("alpha\n"))
	for _, o := range []copyengine.ReadOrder{"", copyengine.ReadOrderAuto} {
		opt := copyengine.Options{Sources: []string{src}, Dest: filepath.Join(t.TempDir(), "dst"), ReadOrder: o}
		if err := opt.Check(); err != nil {
			t.Fatal(err)
		}
		want, why := copyengine.ChooseReadOrder(copyengine.ReadOrderAuto, src)
		if opt.ReadOrder != want || opt.ReadOrderReason != why || why == "" {
			t.Errorf("Check resolved %q to %q (%q), want %q (%q)", o, opt.ReadOrder, opt.ReadOrderReason, want, why)
		}
	}
	for _, o := range []copyengine.ReadOrder{copyengine.ReadOrderDisk, copyengine.ReadOrderInode, copyengine.ReadOrderListing} {
		opt := copyengine.Options{Sources: []string{src}, Dest: filepath.Join(t.TempDir(), "dst"), ReadOrder: o}
		sum, err := runEngine(t, opt)
		if err != nil {
			t.Fatal(err)
		}
		if sum.ReadOrder != o || sum.ReadOrderReason != "set by --order" {
			t.Errorf("summary reports order %q (%q), want %q set by --order", sum.ReadOrder, sum.ReadOrderReason, o)
		}
		sameTree(t, src, opt.Dest)
	}
}
