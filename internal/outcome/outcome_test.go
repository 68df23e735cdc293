package outcome

import (
	"reflect"
	"testing"
)

func TestHubHandsEachOutcomeToEveryListenerInOrder(t *testing.T) {
	var h Hub
	var heard []string
	for _, name := range []string{"cache", "records", "summary", "events"} {
		h.Subscribe(func(o *Outcome) { heard = append(heard, name+":"+o.Path) })
	}
	h.Report(&Outcome{Kind: Placed, Path: "a"})
	h.Report(&Outcome{Kind: Failed, Path: "b"})
	want := []string{"cache:a", "records:a", "summary:a", "events:a", "cache:b", "records:b", "summary:b", "events:b"}
	if !reflect.DeepEqual(heard, want) {
		t.Fatalf("heard %q, want %q", heard, want)
	}
}

func TestKindNames(t *testing.T) {
	for k, want := range map[Kind]string{Placed: "placed", Skipped: "skipped", Fixed: "fixed", Linked: "linked", Failed: "failed", Removed: "removed", 0: "", 9: "kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
