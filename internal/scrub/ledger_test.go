package scrub

import (
	"errors"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/verify"
)

// TestLedgerOutcomes checks that each rotten file is reported once, by
// path, with how it was found and what the run did with it.
func TestLedgerOutcomes(t *testing.T) {
	var l Ledger
	if l.Found() {
		t.Fatal("an empty ledger found rot")
	}
	rec := verify.Bytes([]byte("recorded"))
	l.Note("/d/b", "b", rec, ByScrub)
	l.Note("/d/a", "a", rec, Earlier)
	l.Note("/d/c", "c", rec, ByMove)
	l.Note("/d/a", "a", verify.Bytes(nil), ByScrub) // noted already: kept as it was
	l.Note("/d/e", "e", rec, ByScrub)
	if !l.Found() {
		t.Fatal("rot noted but not found")
	}
	if got, ok := l.RottenAt("/d/a"); !ok || got != rec {
		t.Fatalf("RottenAt(a) = %v, %v; want the recorded digest", got, ok)
	}
	if _, ok := l.RottenAt("/d/none"); ok {
		t.Fatal("a file never noted is rotten")
	}
	if err := l.Settle("/d/a", rec, verify.Bytes([]byte("other"))); !errors.Is(err, ErrRotten) {
		t.Fatalf("Settle repairs from a source that does not hold the recorded digest (%v)", err)
	}
	if l.Settle("/d/b", rec, rec) != nil {
		t.Fatal("Settle does not repair from a source that holds the recorded digest")
	}
	l.RottenAt("/d/c")
	l.LeftAlone("/d/e")
	rs := l.Report()
	want := []struct{ rel, found, outcome string }{
		{"a", "a run before this one", "the source does not hold that digest either"},
		{"b", "--scrub read bytes", "the source holds the digest recorded for it"},
		{"c", "--move read its copy", "its source changed since"},
		{"e", "--scrub read bytes", "left alone by -u or --ignore-existing"},
	}
	if len(rs) != len(want) {
		t.Fatalf("Report = %d files, want %d: %v", len(rs), len(want), rs)
	}
	for i, w := range want {
		r := rs[i]
		if r.Rel != w.rel || !strings.HasPrefix(r.Msg, `"`+w.rel+`": rotten on the device: `+w.found) || !strings.Contains(r.Msg, verify.Hex(rec)) || !strings.Contains(r.Msg, w.outcome) {
			t.Errorf("Report[%d] = %q %q; want %s found as %q, %q", i, r.Rel, r.Msg, w.rel, w.found, w.outcome)
		}
	}
	var l2 Ledger
	l2.Note("/d/x", "x", rec, ByScrub)
	if rs := l2.Report(); len(rs) != 1 || !strings.HasSuffix(rs[0].Msg, notRepairedYet) {
		t.Errorf("a file the walk never met: %v; want it named not repaired", rs)
	}
}
