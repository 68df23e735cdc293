package copyengine

import "testing"

// TestEndScriptOrder holds the end of a run's script to its rules: one
// final flush, every step that needs it after it, nothing a stopped run
// takes after the step that returns its stop, and no step that only some
// runs take before whether the run stopped is decided (right after the
// staged directories are published, as before the script).
func TestEndScriptOrder(t *testing.T) {
	steps := ending{newEngine(Options{})}.script()
	flush, stop, decides := -1, -1, -1
	for i, s := range steps {
		if s.Decides {
			decides = i
		} else if s.When != endAlways && decides < 0 {
			t.Errorf("%q is taken by some runs only, but comes before the step after which that is decided", s.Name)
		}
		switch {
		case s.IsFlush && flush >= 0:
			t.Errorf("two final flushes: %q and %q", steps[flush].Name, s.Name)
		case s.IsFlush:
			flush = i
		case s.Flush && flush < 0:
			t.Errorf("%q needs the final flush but comes before it", s.Name)
		case s.When == endStopped && s.Name == "stop":
			stop = i
		case s.When != endDone && stop >= 0:
			t.Errorf("%q comes after the stop, which a stopped run returns at", s.Name)
		}
		if s.Flush && s.When != endDone {
			t.Errorf("%q runs after the final flush, which only a run not stopped takes", s.Name)
		}
	}
	if flush < 0 || stop < 0 || decides < 0 {
		t.Errorf("the script has no final flush (%d), no stop (%d) or no step that decides whether the run stopped (%d)", flush, stop, decides)
	}
}
