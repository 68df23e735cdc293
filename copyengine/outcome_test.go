package copyengine

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// TestAddOutcome holds the summary arithmetic of each kind of outcome:
// what each adds to the counts, with and without the read-back.
func TestAddOutcome(t *testing.T) {
	placed := func(a Action, size int64) *outcome.Outcome {
		return &outcome.Outcome{Kind: outcome.Placed, Action: string(a), Path: "p", Size: size}
	}
	linkCopy := placed(ActClone, 7)
	linkCopy.LinkCopy = true
	mismatch := &MismatchError{Path: "m", Cause: "differs"}
	for _, c := range []struct {
		name     string
		o        *outcome.Outcome
		verified bool
		want     Summary
	}{
		{"copy", placed(ActCopy, 10), true, Summary{Copied: 1, Bytes: 10, Verified: 1, VerifiedBytes: 10}},
		{"copy unverified", placed(ActCopy, 10), false, Summary{Copied: 1, Bytes: 10}},
		{"clone", placed(ActClone, 5), true, Summary{Copied: 1, Cloned: 1, Bytes: 5, Verified: 1, VerifiedBytes: 5}},
		{"link copy", linkCopy, false, Summary{Copied: 1, Cloned: 1, Bytes: 7, LinkCopies: 1, LinkCopyPaths: []string{"p"}}},
		{"dedup clone", placed(ActDedupClone, 4), true, Summary{Deduped: 1, DedupCloned: 1, BytesNotWritten: 4, DiskSaved: 4, Verified: 1, VerifiedBytes: 4}},
		{"dedup link", placed(ActDedupLink, 4), false, Summary{Deduped: 1, DedupLinked: 1, BytesNotWritten: 4, DiskSaved: 4}},
		{"symlink", placed(ActSymlink, 0), true, Summary{Symlinks: 1}},
		{"special", placed(ActSpecial, 0), true, Summary{Specials: 1}},
		{"link-dest", placed(ActLinkDest, 9), true, Summary{LinkDest: 1}},
		{"not kept", placed(ActNotKept, 0), true, Summary{}},
		{"skipped", &outcome.Outcome{Kind: outcome.Skipped, Size: 3}, true, Summary{Skipped: 1}},
		{"fixed", &outcome.Outcome{Kind: outcome.Fixed, Size: 3}, true, Summary{Skipped: 1, MetaUpdated: 1}},
		{"linked", &outcome.Outcome{Kind: outcome.Linked, Size: 3}, true, Summary{Linked: 1}},
		{"failed", &outcome.Outcome{Kind: outcome.Failed, Path: "f", Err: errors.New("no")}, true, Summary{Failed: 1, Failures: []Failure{newFailure("f", errors.New("no"))}}},
		{"mismatch", &outcome.Outcome{Kind: outcome.Failed, Path: "m", Err: mismatch}, true, Summary{Failed: 1, Mismatches: 1, Failures: []Failure{newFailure("m", mismatch)}}},
	} {
		var got Summary
		addOutcome(&got, c.o, c.verified)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: summary %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestEventOf holds the event each outcome is reported as.
func TestEventOf(t *testing.T) {
	sum := verify.Bytes([]byte("x"))
	err := errors.New("no")
	for _, c := range []struct {
		o    outcome.Outcome
		want Event
	}{
		{outcome.Outcome{Kind: outcome.Placed, Action: string(ActCopy), Path: "a", Size: 1, Sum: sum}, Event{Action: ActCopy, Path: "a", Size: 1, Sum: sum}},
		{outcome.Outcome{Kind: outcome.Placed, Action: string(ActCopy), LinkCopy: true, Path: "a", Size: 1, Sum: sum}, Event{Action: ActLinkCopy, Path: "a", Size: 1, Sum: sum}},
		{outcome.Outcome{Kind: outcome.Placed, Action: string(ActLinkDest), Path: "a", Size: 1, Sum: sum, Listed: true}, Event{Action: ActLinkDest, Path: "a", Size: 1}},
		{*skipOutcome("s", 2, false, sum), Event{Action: ActSkip, Path: "s", Size: 2, Sum: sum}},
		{*skipOutcome("s", 2, true, sum), Event{Action: ActMeta, Path: "s", Size: 2, Sum: sum}},
		{outcome.Outcome{Kind: outcome.Failed, Path: "f", Size: 5, Err: err}, Event{Action: ActFail, Path: "f", Err: err}},
	} {
		if got := eventOf(&c.o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("eventOf(%+v) = %+v, want %+v", c.o, got, c.want)
		}
	}
}
