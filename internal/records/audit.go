package records

import "time"

// Flushes tells an audit log (--log) when what was reported is on
// stable storage: OnFlush(at) says every outcome reported before at is
// durable. Off says there is no flush to wait for (--no-sync, a dry
// run): OnFlush is then never called.
type Flushes struct {
	OnFlush func(at time.Time)
	Off     bool
}

// Wanted says whether OnFlush is to be called.
func (f *Flushes) Wanted() bool { return f.OnFlush != nil && !f.Off }

// Flushed tells OnFlush that what was reported before at is durable.
func (f *Flushes) Flushed(at time.Time) {
	if f.Wanted() {
		f.OnFlush(at)
	}
}
