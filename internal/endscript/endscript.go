package endscript

import "fmt"

// When says which runs take a step of the end of a run.
type When uint8

// The runs a step is for.
const (
	Always  When = iota // every run
	Done                // a run that was not stopped
	Stopped             // a run that was stopped: it reports the stop
)

// Step is one step of the end of a run.
type Step struct {
	Name  string // what it does, for a misordered script's panic
	When  When
	Flush bool // runs after the final flush (which is a step of its own, IsFlush)
	// IsFlush marks the final flush of what the run wrote.
	IsFlush bool
	// Decides: once this step is done, whether the run was stopped is
	// asked (the copy's own last writes are done by then), and the
	// answer holds for the rest of the script.
	Decides bool
	Do      func() error
}

// Call makes a step of a call that cannot fail.
func Call(name string, when When, f func()) Step {
	return Step{Name: name, When: when, Do: func() error { f(); return nil }}
}

// Config is what Run asks of the run.
type Config struct {
	Err    func() error // the run's cancellation: nil while it goes on
	Halted func() bool  // the run was stopped otherwise (a drive gone)
	Strict bool         // a step that needs the flush before it is a panic (test builds)
}

// Run runs the steps and returns the run's error: the first step's that
// failed, or Err's once the script is done (or once a step needs the
// flush of a cancelled run).
func Run(cfg Config, steps []Step) error {
	var stopped, known bool
	flushed := false
	for _, s := range steps {
		switch {
		case s.When == Done && stopped, s.When == Stopped && !stopped:
			continue
		case s.Flush && !flushed && cfg.Strict:
			panic(fmt.Sprintf("copyengine: the end of a run's step %q comes before the final flush", s.Name))
		case s.Flush && cfg.Err() != nil:
			return cfg.Err()
		}
		if err := s.Do(); err != nil {
			return err
		}
		flushed = flushed || s.IsFlush
		if s.Decides && !known {
			// A drive that went during the copy's last writes stops the
			// run too.
			stopped, known = cfg.Err() != nil || cfg.Halted(), true
		}
	}
	return cfg.Err()
}
