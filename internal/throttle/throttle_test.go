package throttle

import (
	"context"
	"testing"
)

// bucketWait charges n bytes to the token bucket --bwlimit makes for
// bytesPerSec, and returns its burst.
func bucketWait(ctx context.Context, bytesPerSec, n int64) (burst int64, err error) {
	b := NewBucket(bytesPerSec)
	return b.Piece(), b.Wait(ctx, Read, n)
}

// The bucket lets a charge larger than its burst through in pieces, and
// its burst is one buffer, or one second's worth at a lower limit.
func TestBwLimitBucket(t *testing.T) {
	ctx := context.Background()
	burst, err := bucketWait(ctx, 1<<40, 5<<20)
	if err != nil || burst != 1<<20 {
		t.Errorf("a 5 MiB charge to a fast bucket: burst %d, error %v; want a burst of 1 MiB and no error", burst, err)
	}
	burst, err = bucketWait(ctx, 1000, 1000)
	if err != nil || burst != 1000 {
		t.Errorf("1000 B/s: burst %d, error %v; want 1000 and no error", burst, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := bucketWait(cancelled, 1000, 5000); err != context.Canceled {
		t.Errorf("a charge past the burst in a cancelled run: %v, want context.Canceled", err)
	}
}
