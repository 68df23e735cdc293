package outcome

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fastcopy/fastcopy/internal/refusal"
)

// TestSummaryAdd holds the summary arithmetic of each kind of outcome:
// what each adds to the counts, with and without the read-back.
func TestSummaryAdd(t *testing.T) {
	placed := func(a Action, size int64) *Outcome {
		return &Outcome{Kind: Placed, Action: a, Path: "p", Size: size}
	}
	linkCopy := placed(ActClone, 7)
	linkCopy.LinkCopy = true
	mismatch := &refusal.Mismatch{Path: "m", Cause: "differs"}
	for _, c := range []struct {
		name     string
		o        *Outcome
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
		{"skipped", &Outcome{Kind: Skipped, Size: 3}, true, Summary{Skipped: 1}},
		{"fixed", &Outcome{Kind: Fixed, Size: 3}, true, Summary{Skipped: 1, MetaUpdated: 1}},
		{"linked", &Outcome{Kind: Linked, Size: 3}, true, Summary{Linked: 1}},
		{"failed", &Outcome{Kind: Failed, Path: "f", Err: errors.New("no")}, true, Summary{Failed: 1, Failures: []Failure{NewFailure("f", errors.New("no"))}}},
		{"mismatch", &Outcome{Kind: Failed, Path: "m", Err: mismatch}, true, Summary{Failed: 1, Mismatches: 1, Failures: []Failure{NewFailure("m", mismatch)}}},
	} {
		var got Summary
		got.Add(c.o, c.verified)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: summary %+v, want %+v", c.name, got, c.want)
		}
	}
}
