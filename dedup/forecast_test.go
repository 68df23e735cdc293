package dedup

import (
	"errors"
	"testing"

	"github.com/fastcopy/fastcopy/verify"
)

// planned is a file of content s whose hashes and keeps are counted.
func planned(s string, meta Meta, hashes, kept *int) *Planned {
	return &Planned{Size: int64(len(s)), Meta: meta,
		Hash: func(bool) (verify.Sum, error) { *hashes++; return verify.Bytes([]byte(s)), nil },
		Keep: func() { *kept++ }}
}

func noConfirm(*Target, verify.Sum) (Meta, bool) { return Meta{}, false }

func TestForecastHashesOnlyCollidingSizes(t *testing.T) {
	t.Parallel()
	var fc Forecast
	links := Dest{Mode: Hardlink, HasLinks: yes}
	var ha, hb, hc, kept int
	m := Meta{Mode: 0o644}
	if w, hashed := fc.Place(planned("aaaa", m, &ha, &kept), links, noConfirm); w != Copied || hashed || ha != 0 {
		t.Fatalf("a unique size: %v hashed %v (%d hashes)", w, hashed, ha)
	}
	if w, hashed := fc.Place(planned("bbb", m, &hb, &kept), links, noConfirm); w != Copied || hashed || hb != 0 {
		t.Fatalf("another unique size: %v hashed %v", w, hashed)
	}
	w, hashed := fc.Place(planned("aaaa", m, &hc, &kept), links, noConfirm)
	if w != Linked || !hashed || ha != 1 || hc != 1 {
		t.Fatalf("a duplicate: %v hashed %v (hashes %d, %d), want a link, both hashed once", w, hashed, ha, hc)
	}
	if kept != 2 {
		t.Errorf("%d files kept, want the 2 written", kept)
	}
	var other int
	if w, _ := fc.Place(planned("aaaa", Meta{Mode: 0o600}, &other, &kept), links, noConfirm); w != Copied {
		t.Errorf("a duplicate with other metadata under hardlink: %v, want a copy", w)
	}
}

func TestForecastDestNeedsConfirm(t *testing.T) {
	t.Parallel()
	sum := verify.Bytes([]byte("dddd"))
	fc := Forecast{Load: func(add func(*Target)) { add(&Target{Rel: "old", Sum: sum, Size: 4, External: true}) }}
	clones := Dest{Mode: Auto, HasLinks: yes}
	var h, kept int
	asked := 0
	refuse := func(t *Target, s verify.Sum) (Meta, bool) { asked++; return Meta{}, false }
	if w, hashed := fc.Place(planned("dddd", Meta{}, &h, &kept), clones, refuse); w != Copied || !hashed || asked != 1 {
		t.Fatalf("an unconfirmed DEST file: %v hashed %v asked %d, want a copy after one proof", w, hashed, asked)
	}
	accept := func(t *Target, s verify.Sum) (Meta, bool) { return Meta{}, s == sum }
	if w, _ := fc.Place(planned("dddd", Meta{}, &h, &kept), clones, accept); w != Cloned {
		t.Fatalf("a confirmed DEST file on a filesystem that clones: %v, want a clone", w)
	}
}

func TestForecastHashFailureCopies(t *testing.T) {
	t.Parallel()
	var fc Forecast
	var h, kept int
	fc.Place(planned("xx", Meta{}, &h, &kept), Dest{Mode: Auto}, noConfirm)
	bad := &Planned{Size: 2, Hash: func(bool) (verify.Sum, error) { return verify.Sum{}, errors.New("moved") }}
	if w, hashed := fc.Place(bad, Dest{Mode: Auto}, noConfirm); w != Copied || hashed {
		t.Fatalf("an unreadable file: %v hashed %v, want a copy, not hashed", w, hashed)
	}
	released := 0
	for _, l := range fc.bySize {
		for _, p := range l {
			p.Release = func() { released++ }
		}
	}
	fc.Close()
	if released != 1 {
		t.Errorf("Close released %d files, want the 1 kept (not the unreadable one)", released)
	}
}
