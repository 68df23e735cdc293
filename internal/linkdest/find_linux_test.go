//go:build linux

package linkdest

import (
	"errors"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/verify"
)

// TestFind checks the search: a counterpart with the source's digest, its
// extended attributes equal and on the destination's filesystem, is handed
// to Use; another digest or other attributes pass it over; another
// filesystem, or a Use that cannot link, is the reason to copy; a source
// that cannot be read ends the search.
func TestFind(t *testing.T) {
	t.Parallel()
	s, _, st := setup(t, nil, false)
	same := verify.Bytes([]byte("the counterpart"))
	query := func() Query {
		return Query{DirRel: "a", Name: "f", Rel: "a/f", Want: want(st), Buf: make([]byte, 1<<16), DestDev: st.Dev,
			Read:       func(Read) {},
			Source:     func() (verify.Sum, bool) { return same, true },
			SameXattrs: func(Cand) bool { return true },
		}
	}
	q := query()
	var got Found
	q.Use = func(f Found) (bool, error) { got = f; return true, nil }
	if used, why := s.Find(q); !used || why != nil || got.Sum != same || got.St.Ino != st.Ino || got.Cand.Rel != "a/f" {
		t.Errorf("a match: used %v, %v, found %+v; want a/f handed over", used, why, got)
	}
	never := func(Found) (bool, error) { t.Error("Use called"); return true, nil }
	for name, change := range map[string]func(*Query){
		"another digest":    func(q *Query) { q.Source = func() (verify.Sum, bool) { return verify.Bytes([]byte("x")), true } },
		"other xattrs":      func(q *Query) { q.SameXattrs = func(Cand) bool { return false } },
		"source unreadable": func(q *Query) { q.Source = func() (verify.Sum, bool) { return verify.Sum{}, false } },
	} {
		q := query()
		q.Use = never
		change(&q)
		if used, why := s.Find(q); used || why != nil {
			t.Errorf("%s: used %v, %v; want neither", name, used, why)
		}
	}
	q = query()
	q.DestDev, q.Use = st.Dev+1, never
	if used, why := s.Find(q); used || !errors.Is(why, syscall.EXDEV) {
		t.Errorf("another filesystem: used %v, %v; want EXDEV", used, why)
	}
	q = query()
	q.Use = func(Found) (bool, error) { return false, syscall.EMLINK }
	if used, why := s.Find(q); used || !errors.Is(why, syscall.EMLINK) {
		t.Errorf("out of links: used %v, %v; want EMLINK", used, why)
	}
}
