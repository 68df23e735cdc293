package outcome

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fastcopy/fastcopy/verify"
)

// TestEventOf holds the event each outcome is reported as.
func TestEventOf(t *testing.T) {
	sum := verify.Bytes([]byte("x"))
	err := errors.New("no")
	for _, c := range []struct {
		o    Outcome
		want Event
	}{
		{Outcome{Kind: Placed, Action: ActCopy, Path: "a", Size: 1, Sum: sum}, Event{Action: ActCopy, Path: "a", Size: 1, Sum: sum}},
		{Outcome{Kind: Placed, Action: ActCopy, LinkCopy: true, Path: "a", Size: 1, Sum: sum}, Event{Action: ActLinkCopy, Path: "a", Size: 1, Sum: sum}},
		{Outcome{Kind: Placed, Action: ActLinkDest, Path: "a", Size: 1, Sum: sum, Listed: true}, Event{Action: ActLinkDest, Path: "a", Size: 1}},
		{Outcome{Kind: Skipped, Action: ActSkip, Path: "s", Size: 2, Sum: sum}, Event{Action: ActSkip, Path: "s", Size: 2, Sum: sum}},
		{Outcome{Kind: Fixed, Action: ActMeta, Path: "s", Size: 2, Sum: sum}, Event{Action: ActMeta, Path: "s", Size: 2, Sum: sum}},
		{Outcome{Kind: Failed, Path: "f", Size: 5, Err: err}, Event{Action: ActFail, Path: "f", Err: err}},
	} {
		if got := EventOf(&c.o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("EventOf(%+v) = %+v, want %+v", c.o, got, c.want)
		}
	}
}
