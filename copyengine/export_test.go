package copyengine

import (
	"context"
	"sync"

	"github.com/fastcopy/fastcopy/internal/throttle"
)

// WithStageLimits returns opt with the most files and bytes a new
// directory may hold and still be kept staged lowered to files and bytes,
// for its run alone.
func WithStageLimits(opt Options, files int, bytes int64) Options {
	opt.hooks.stageMaxFiles, opt.hooks.stageMaxBytes = files, bytes
	return opt
}

// WithResumeMin returns opt with the size from which an interrupted copy's
// temporary is kept and taken up lowered to n, for its run alone.
func WithResumeMin(opt Options, n int64) Options {
	opt.hooks.resumeMin = n
	return opt
}

// Charges records what a run charges to its --bwlimit throttle, in place
// of the token bucket: the bytes of each kind and the largest single charge
// of bytes moved by copy_file_range (which asks the throttle for its piece).
type Charges struct {
	mu          sync.Mutex
	Read, Write int64
	Calls       int
	Max         int64 // the largest single charge
	Piece       int64 // what the throttle's Piece answers
}

func (c *Charges) wait(_ context.Context, kind throttle.Kind, n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Calls++
	c.Max = max(c.Max, n)
	if kind == throttle.Read {
		c.Read += n
	} else {
		c.Write += n
	}
	return nil
}

// chargesThrottle is c as a throttle.Throttle (Charges has a field named
// Piece, so it cannot have the method).
type chargesThrottle struct{ c *Charges }

func (t chargesThrottle) Wait(ctx context.Context, kind throttle.Kind, n int64) error {
	return t.c.wait(ctx, kind, n)
}

func (t chargesThrottle) Piece() int64 { return t.c.Piece }

// Totals returns the bytes charged as read and as written.
func (c *Charges) Totals() (read, write int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Read, c.Write
}

// RecordCharges makes the run of opt charge c instead of a token bucket.
func RecordCharges(opt *Options, c *Charges) { opt.throttle = chargesThrottle{c} }

// SetReadWindowFiles lowers the most files a read window of the run with
// opt holds (disk and inode order), so that a small tree fills several.
func SetReadWindowFiles(opt *Options, n int) { opt.readWindowFiles = n }

// ReadWindowFiles is what SetReadWindowFiles set (0: the default).
func ReadWindowFiles(opt *Options) int { return opt.readWindowFiles }
