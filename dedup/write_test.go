package dedup

import (
	"testing"

	"github.com/fastcopy/fastcopy/verify"
)

func TestEndRegistersOnlyWhatWasWritten(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	sum := verify.Bytes([]byte("abcd"))
	ix.Begin(4, nil)
	if got := ix.End(Write{Begun: true}, 4, nil); got != nil {
		t.Fatalf("a file not written was registered: %v", got)
	}
	ix.Begin(4, nil)
	tg := ix.End(Write{Begun: true}, 4, &Written{Rel: "a", Size: 4, Sum: sum})
	if tg == nil || tg.Rel != "a" {
		t.Fatalf("a written file was not registered: %v", tg)
	}
	claimed, mine := ix.Find("b", 4, verify.Bytes([]byte("wxyz")), Meta{}, no)
	if !mine {
		t.Fatal("Find matched another digest")
	}
	if got := ix.End(Write{Claimed: claimed}, 4, &Written{Rel: "b", Size: 4, Sum: sum}); got != nil {
		t.Fatal("a claimed file written with another digest than it was found by kept its place")
	}
	if _, mine := ix.Find("c", 4, verify.Bytes([]byte("wxyz")), Meta{}, no); !mine {
		t.Fatal("a dropped target is still found")
	}
}

func TestCandidates(t *testing.T) {
	t.Parallel()
	ix := NewIndex()
	sum := verify.Bytes([]byte("abcd"))
	m := Meta{Mode: 0o644}
	ix.Begin(4, nil)
	a := ix.Register("a", 4, sum, m)
	ix.Add(&Target{Rel: "b", Sum: sum, Size: 4, Meta: m})
	ix.Add(&Target{Rel: "c", Sum: sum, Size: 4, Meta: Meta{Mode: 0o600}})
	if got := ix.Candidates(a, m, Clone); len(got) != 1 || got[0] != a {
		t.Errorf("under clone: %v, want the matched target alone", got)
	}
	got := ix.Candidates(a, m, Auto)
	if len(got) != 2 || got[0] != a || got[1].Rel != "b" {
		t.Errorf("under auto: %v, want the matched target, then the other with the same metadata", got)
	}
}
