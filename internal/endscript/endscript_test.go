package endscript

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// TestRun: a run not stopped takes the Done steps and the flush; a
// stopped one (decided once the deciding step is done) takes the Stopped
// steps and ends with its stop; a cancelled one skips what needs the
// flush; a misordered script panics under Strict.
func TestRun(t *testing.T) {
	// haltIn names the step during which the run is found halted.
	script := func(got *[]string, halted *bool, haltIn string) []Step {
		add := func(n string) func() {
			return func() {
				*got = append(*got, n)
				if n == haltIn {
					*halted = true
				}
			}
		}
		errStop := errors.New("stopped")
		return []Step{
			Call("always", Always, add("always")),
			{Name: "decide", When: Always, Decides: true, Do: func() error { add("decide")(); return nil }},
			Call("done", Done, add("done")),
			{Name: "stop", When: Stopped, Do: func() error { add("stop")(); return errStop }},
			{Name: "flush", When: Done, IsFlush: true, Do: func() error { add("flush")(); return nil }},
			{Name: "after", When: Done, Flush: true, Do: func() error { add("after")(); return nil }},
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	halted := false
	cfg := Config{Err: ctx.Err, Halted: func() bool { return halted }, Strict: true}
	if err := Run(cfg, script(&got, &halted, "")); err != nil || !reflect.DeepEqual(got, []string{"always", "decide", "done", "flush", "after"}) {
		t.Errorf("a run not stopped: %v, took %v", err, got)
	}
	got, halted = nil, false
	if err := Run(cfg, script(&got, &halted, "decide")); err == nil || err.Error() != "stopped" || !reflect.DeepEqual(got, []string{"always", "decide", "stop"}) {
		t.Errorf("a run halted during the deciding step: %v, took %v", err, got)
	}
	// Found halted once the stop was decided: the run is not stopped.
	got, halted = nil, false
	if err := Run(cfg, script(&got, &halted, "done")); err != nil || !reflect.DeepEqual(got, []string{"always", "decide", "done", "flush", "after"}) {
		t.Errorf("a run halted after the deciding step: %v, took %v", err, got)
	}
	got, halted = nil, false
	steps := script(&got, &halted, "")
	steps[4].Do = func() error { cancel(); return nil } // cancelled during the flush
	if err := Run(cfg, steps); !errors.Is(err, context.Canceled) || !reflect.DeepEqual(got, []string{"always", "decide", "done"}) {
		t.Errorf("a run cancelled by the flush: %v, took %v", err, got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a step needing the flush before it did not panic")
		}
	}()
	Run(Config{Err: func() error { return nil }, Halted: func() bool { return false }, Strict: true}, []Step{{Name: "early", When: Done, Flush: true, Do: func() error { return nil }}})
}
