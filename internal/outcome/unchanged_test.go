package outcome

import (
	"reflect"
	"testing"

	"github.com/fastcopy/fastcopy/verify"
)

// TestUnchanged holds the outcome of an unchanged entry and the event it
// is reported as: a skip, or metadata when it was fixed, with its digest
// (TestEventOf holds the other events).
func TestUnchanged(t *testing.T) {
	sum := verify.Bytes([]byte("x"))
	for _, c := range []struct {
		fixed bool
		kind  Kind
		want  Event
	}{
		{false, Skipped, Event{Action: ActSkip, Path: "s", Size: 2, Sum: sum}},
		{true, Fixed, Event{Action: ActMeta, Path: "s", Size: 2, Sum: sum}},
	} {
		o := Unchanged("s", 2, c.fixed, sum)
		if o.Kind != c.kind {
			t.Errorf("Unchanged(fixed %v).Kind = %v, want %v", c.fixed, o.Kind, c.kind)
		}
		if got := EventOf(o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("EventOf(Unchanged(fixed %v)) = %+v, want %+v", c.fixed, got, c.want)
		}
	}
}
