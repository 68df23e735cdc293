package copyengine

import (
	"context"

	"golang.org/x/time/rate"
)

// --bwlimit: one token bucket per run, shared by every worker, charged
// with the file content the run moves, reads and writes together:
//
//   - reads: the sources as they are copied or hashed, the read-backs (of
//     the committer, of a large file as it is written, of --verify=cache),
//     the destination files hashed to decide, the dedup targets read again
//     and the bytes compared (--dedup-verify=bytes), a resumed temporary;
//   - writes: the data written to the temporaries (the zeros of a sparse
//     file's holes are not written, so not charged);
//   - a clone (FICLONE, a dedup clone) and a copy_file_range move bytes
//     inside the kernel: each byte they move is charged once as read and
//     once as written, and copy_file_range is called in pieces of at most
//     the bucket's burst, so that no call runs past the limit.
//
// Each charge is waited for before the next piece of I/O of the same file,
// after the piece it is for: the rate holds over time, a piece at a time.

// ioKind says which side of the traffic a charge is for.
type ioKind int

const (
	ioRead ioKind = iota
	ioWrite
)

// throttle is what the run's I/O is charged to: a token bucket (rateThrottle)
// for --bwlimit, a recorder in tests.
type throttle interface {
	// wait blocks until n bytes of kind may pass, or ctx is done.
	wait(ctx context.Context, kind ioKind, n int64) error
	// piece is the most bytes one call of copy_file_range may move.
	piece() int64
}

// bwBurst is the most bytes the bucket lets pass at once: one buffer of
// the copy loop, or one second's worth at a lower limit.
const bwBurst = 1 << 20

// rateThrottle is the bucket of --bwlimit.
type rateThrottle struct{ l *rate.Limiter }

func newRateThrottle(bytesPerSec int64) *rateThrottle {
	burst := min(bytesPerSec, bwBurst)
	return &rateThrottle{l: rate.NewLimiter(rate.Limit(bytesPerSec), int(burst))}
}

func (r *rateThrottle) wait(ctx context.Context, _ ioKind, n int64) error {
	b := int64(r.l.Burst())
	for n > 0 {
		k := min(n, b)
		if err := r.l.WaitN(ctx, int(k)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		n -= k
	}
	return nil
}

func (r *rateThrottle) piece() int64 { return int64(r.l.Burst()) }

// throttleFor is the throttle of a run with options o: nil without a limit.
func throttleFor(o *Options) throttle {
	switch {
	case o.throttle != nil:
		return o.throttle
	case o.BwLimit > 0:
		return newRateThrottle(o.BwLimit)
	}
	return nil
}

// charged waits until n bytes of kind may pass (see bwlimit.go's top).
func (e *engine) charged(kind ioKind, n int64) error {
	if e.bw == nil || n <= 0 {
		return nil
	}
	return e.bw.wait(e.ctx, kind, n)
}

// readSink is a verify.Sink that charges each piece read, and stops the
// read once the run is cancelled (as ctxSink does).
func (e *engine) readSink(p []byte, _ int64) error {
	if err := e.charged(ioRead, int64(len(p))); err != nil {
		return err
	}
	return e.ctx.Err()
}

// copyRangePiece is the most one copy_file_range call moves: the whole file
// without a limit.
func (e *engine) copyRangePiece(size int64) int64 {
	if e.bw == nil {
		return size
	}
	return max(1, e.bw.piece())
}

// chargedMoved charges n bytes a clone or copy_file_range moved inside the
// kernel: read once and written once.
func (e *engine) chargedMoved(n int64) error {
	if err := e.charged(ioRead, n); err != nil {
		return err
	}
	return e.charged(ioWrite, n)
}

// copyRangePieces copies the file with copy_file_range, in pieces no
// larger than --bwlimit's burst, each charged as it is done. It returns the
// bytes copied (fewer than the file's size when the source ended early).
func (fc *fileCopy) copyRangePieces() (int64, error) {
	e, size := fc.cp.e, fc.en.st.Size
	piece := e.copyRangePiece(size)
	var done int64
	for done < size {
		n, err := fc.dst.CopyRange(fc.src, done, done, min(piece, size-done))
		done += n
		if cerr := e.chargedMoved(n); err == nil {
			err = cerr
		}
		if err != nil || n == 0 {
			return done, err
		}
	}
	return done, nil
}
