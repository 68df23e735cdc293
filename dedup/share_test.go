package dedup

import "testing"

func TestDestWay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d        Dest
		sameMeta bool
		want     Way
	}{
		{Dest{Mode: Auto, HasLinks: yes}, false, Cloned},
		{Dest{Mode: Auto, CannotClone: true, HasLinks: yes}, true, Linked},
		{Dest{Mode: Auto, CannotClone: true, HasLinks: yes}, false, Copied},
		{Dest{Mode: Auto, NoReflink: true, HasLinks: yes}, true, Linked},
		{Dest{Mode: Auto, CannotClone: true}, true, Copied}, // no hard links (FAT, exFAT)
		{Dest{Mode: Clone, HasLinks: yes}, true, Cloned},
		{Dest{Mode: Clone, CannotClone: true, HasLinks: yes}, true, Copied}, // never a link under clone
		{Dest{Mode: Hardlink, HasLinks: yes}, true, Linked},
		{Dest{Mode: Hardlink, HasLinks: yes}, false, Copied},
		{Dest{Mode: Hardlink}, true, Copied},
	} {
		if got := c.d.Way(c.sameMeta); got != c.want {
			t.Errorf("%+v sameMeta %v: %v, want %v", c.d, c.sameMeta, got, c.want)
		}
	}
}

func TestDestLinkOnlyAndNotes(t *testing.T) {
	t.Parallel()
	if !(Dest{Mode: Hardlink}).LinkOnly() || !(Dest{Mode: Auto, CannotClone: true}).LinkOnly() ||
		!(Dest{Mode: Auto, NoReflink: true}).LinkOnly() {
		t.Error("hardlink, or auto that cannot clone, is not link-only")
	}
	if (Dest{Mode: Auto}).LinkOnly() || (Dest{Mode: Clone, CannotClone: true}).LinkOnly() {
		t.Error("auto that clones, or clone, is link-only")
	}
	if ok, note := (Dest{Mode: Clone, CannotClone: true, HasLinks: yes}).MayLink(); ok || note == "" {
		t.Errorf("clone on a filesystem that cannot: may link %v, note %q", ok, note)
	}
	if ok, note := (Dest{Mode: Hardlink}).MayLink(); ok || note == "" {
		t.Errorf("hardlink without hard links: may link %v, note %q", ok, note)
	}
	if ok, note := (Dest{Mode: Auto}).MayLink(); ok || note != "" {
		t.Errorf("auto without hard links: may link %v, note %q (auto says nothing)", ok, note)
	}
}
