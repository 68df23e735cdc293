package preflight

import (
	"testing"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/internal/outcome"
)

// TestCheckOptions: empty modes take their defaults; each refusal says
// what is wrong, word for word.
func TestCheckOptions(t *testing.T) {
	var o Options
	if err := CheckOptions(&o); err != nil {
		t.Fatal(err)
	}
	if o.Reflink != ReflinkAuto || o.Verify != outcome.VerifyDevice || o.Dedup != dedup.Auto || o.Names != "strict" {
		t.Errorf("defaults: %+v", o)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Reflink: "sometimes"}, `"sometimes": is not a --reflink mode: must be auto, always or never, not "sometimes"`},
		{Options{Dedup: dedup.Clone, Reflink: ReflinkNever}, "--dedup=clone needs clones, which --reflink=never forbids; use --dedup=hardlink or --dedup=off"},
		{Options{BwLimit: -1}, "--bwlimit must be above 0, not -1"},
		{Options{Jobs: -2}, "--jobs must be 1 or more, not -2"},
		{Options{Sources: []string{"a"}, Dest: " "}, "an argument is empty; name a path"},
		{Options{LinkDest: []string{""}}, "--link-dest is empty; name a directory that holds an earlier copy"},
	} {
		if err := CheckOptions(&c.o); err == nil || err.Error() != c.want {
			t.Errorf("CheckOptions(%+v) = %v, want %s", c.o, err, c.want)
		}
	}
}
