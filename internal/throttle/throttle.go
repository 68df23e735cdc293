package throttle

import (
	"context"

	"golang.org/x/time/rate"
)

// Kind says which side of the traffic a charge is for.
type Kind int

// The kinds of traffic.
const (
	Read Kind = iota
	Write
)

// Throttle is what a run's I/O is charged to: a token bucket (Bucket) for
// --bwlimit, a recorder in tests.
type Throttle interface {
	// Wait blocks until n bytes of kind may pass, or ctx is done.
	Wait(ctx context.Context, kind Kind, n int64) error
	// Piece is the most bytes one call of copy_file_range may move.
	Piece() int64
}

// Burst is the most bytes the bucket lets pass at once: one buffer of the
// copy loop, or one second's worth at a lower limit.
const Burst = 1 << 20

// Bucket is the token bucket of --bwlimit.
type Bucket struct{ l *rate.Limiter }

// NewBucket returns a bucket that lets bytesPerSec bytes pass each second,
// at most Burst (or one second's worth, when less) at once.
func NewBucket(bytesPerSec int64) *Bucket {
	burst := min(bytesPerSec, Burst)
	return &Bucket{l: rate.NewLimiter(rate.Limit(bytesPerSec), int(burst))}
}

// Wait blocks until n bytes may pass, taking them a burst at a time, or
// returns ctx's error once ctx is done.
func (b *Bucket) Wait(ctx context.Context, _ Kind, n int64) error {
	burst := int64(b.l.Burst())
	for n > 0 {
		k := min(n, burst)
		if err := b.l.WaitN(ctx, int(k)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		n -= k
	}
	return nil
}

// Piece is the bucket's burst.
func (b *Bucket) Piece() int64 { return int64(b.l.Burst()) }

// Config is what a run's meter is made from.
type Config struct {
	// BytesPerSec is --bwlimit: 0 or less for no limit.
	BytesPerSec int64
	// Throttle, when set, is charged instead of a bucket of BytesPerSec
	// (a recorder in tests).
	Throttle Throttle
}

// Meter is a run's throttle as its I/O paths charge it. A nil *Meter is a
// run without a limit: every charge passes at once.
type Meter struct{ t Throttle }

// New returns the meter of a run with cfg: nil without a limit.
func New(cfg Config) *Meter {
	switch {
	case cfg.Throttle != nil:
		return &Meter{t: cfg.Throttle}
	case cfg.BytesPerSec > 0:
		return &Meter{t: NewBucket(cfg.BytesPerSec)}
	}
	return nil
}

// Charge waits until n bytes of kind may pass, or ctx is done.
func (m *Meter) Charge(ctx context.Context, kind Kind, n int64) error {
	if m == nil || n <= 0 {
		return nil
	}
	return m.t.Wait(ctx, kind, n)
}

// Moved charges n bytes a clone or copy_file_range moved inside the
// kernel: read once and written once.
func (m *Meter) Moved(ctx context.Context, n int64) error {
	if err := m.Charge(ctx, Read, n); err != nil {
		return err
	}
	return m.Charge(ctx, Write, n)
}

// Sink returns a verify.Sink that charges each piece read, and stops the
// read once ctx is done.
func (m *Meter) Sink(ctx context.Context) func(p []byte, off int64) error {
	return func(p []byte, _ int64) error {
		if err := m.Charge(ctx, Read, int64(len(p))); err != nil {
			return err
		}
		return ctx.Err()
	}
}

// Piece is the most one copy_file_range call moves of a file of size
// bytes: the whole file without a limit, else the throttle's piece.
func (m *Meter) Piece(size int64) int64 {
	if m == nil {
		return size
	}
	return max(1, m.t.Piece())
}

// Pieces moves a file of size bytes with copyRange (which copies up to n
// bytes at off and says how many it copied), in pieces of at most Piece,
// each charged as moved once it is done. It returns the bytes moved: fewer
// than size when copyRange copied nothing (the source ended early) or
// failed.
func (m *Meter) Pieces(ctx context.Context, size int64, copyRange func(off, n int64) (int64, error)) (int64, error) {
	piece := m.Piece(size)
	var done int64
	for done < size {
		n, err := copyRange(done, min(piece, size-done))
		done += n
		if cerr := m.Moved(ctx, n); err == nil {
			err = cerr
		}
		if err != nil || n == 0 {
			return done, err
		}
	}
	return done, nil
}
