package copyengine

import "testing"

// TestEndScriptOrder holds the end of a run's script to its rules: one
// final flush, every step that needs it after it, and nothing a stopped
// run takes after the step that returns its stop.
func TestEndScriptOrder(t *testing.T) {
	steps := ending{newEngine(Options{})}.script()
	flush, stop := -1, -1
	for i, s := range steps {
		switch {
		case s.isFlush && flush >= 0:
			t.Errorf("two final flushes: %q and %q", steps[flush].name, s.name)
		case s.isFlush:
			flush = i
		case s.flush && flush < 0:
			t.Errorf("%q needs the final flush but comes before it", s.name)
		case s.when == endStopped && s.name == "stop":
			stop = i
		case s.when != endDone && stop >= 0:
			t.Errorf("%q comes after the stop, which a stopped run returns at", s.name)
		}
		if s.flush && s.when != endDone {
			t.Errorf("%q runs after the final flush, which only a run not stopped takes", s.name)
		}
	}
	if flush < 0 || stop < 0 {
		t.Errorf("the script has no final flush (%d) or no stop (%d)", flush, stop)
	}
}
