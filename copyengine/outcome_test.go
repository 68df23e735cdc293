package copyengine

import (
	"reflect"
	"testing"

	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// newFailure is the failure of the file at path with err, for the tests
// that build a summary themselves (memDest).
func newFailure(path string, err error) Failure { return outcome.NewFailure(path, err) }

// TestSkipOutcome holds the outcome of an unchanged entry and the event it
// is reported as: a skip, or metadata when it was fixed, with its digest
// (internal/outcome's TestEventOf holds the other events).
func TestSkipOutcome(t *testing.T) {
	sum := verify.Bytes([]byte("x"))
	for _, c := range []struct {
		fixed bool
		kind  outcome.Kind
		want  Event
	}{
		{false, outcome.Skipped, Event{Action: ActSkip, Path: "s", Size: 2, Sum: sum}},
		{true, outcome.Fixed, Event{Action: ActMeta, Path: "s", Size: 2, Sum: sum}},
	} {
		o := skipOutcome("s", 2, c.fixed, sum)
		if o.Kind != c.kind {
			t.Errorf("skipOutcome(fixed %v).Kind = %v, want %v", c.fixed, o.Kind, c.kind)
		}
		if got := outcome.EventOf(o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("EventOf(skipOutcome(fixed %v)) = %+v, want %+v", c.fixed, got, c.want)
		}
	}
}
