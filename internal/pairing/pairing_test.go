package pairing

import (
	"errors"
	"testing"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/made"
)

func entries(names ...string) []fileio.DirEntry {
	out := make([]fileio.DirEntry, len(names))
	for i, n := range names {
		out[i] = fileio.DirEntry{Name: n}
	}
	return out
}

func TestPairTempNamesAndRecord(t *testing.T) {
	bad := errors.New("cannot hold")
	src := entries("a", destfs.TempName("a"), made.Name, "x:y", "left")
	p := Pair(Config{
		Src:      src,
		Excluded: []bool{false, false, false, false, true},
		Listing:  entries(destfs.TempName("b"), destfs.TempName("c")),
	}, Rules{
		Map: func(n string) (string, error) {
			if n == "x:y" {
				return "", bad
			}
			return n, nil
		},
		Ours: func(n string) bool { return n == destfs.TempName("c") },
	})
	if p.Tmp("a") == "" || p.TempName("a") == destfs.TempName("a") {
		t.Errorf("a's temporary is a source name: %q", p.TempName("a"))
	}
	if p.Tmp("b") == "" {
		t.Errorf("b's temporary is the user's entry in the destination")
	}
	if p.Tmp("c") != "" || p.TempName("c") != destfs.TempName("c") {
		t.Errorf("c's temporary is a run's leftover, yet not used: %q", p.TempName("c"))
	}
	if _, err := p.Refused(2); err != made.ErrName {
		t.Errorf("the record's name: %v", err)
	}
	if _, err := p.Refused(3); err != bad || !p.Out(3) {
		t.Errorf("an unmappable name: %v", err)
	}
	if !p.Out(4) || p.Out(0) {
		t.Errorf("Out: %v %v", p.Out(4), p.Out(0))
	}
	if win, err := p.Refused(0); win != "" || err != nil {
		t.Errorf("a plain name refused: %q %v", win, err)
	}
}
