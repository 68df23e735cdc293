package transfer

import (
	"context"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// PrereadJob is a source to read for its digest before the decision to
// write it (a duplicate's, whose size another file of the run shares):
// its stat as walked, whether its inode number may differ between stats
// (InoLoose), the resolution of its filesystem's times, and how it is
// opened and streamed into its digest.
type PrereadJob struct {
	St       fileio.Stat
	InoLoose bool
	Res      int64
	Open     func() (*fileio.File, error)
	Stream   func(f *fileio.File) (verify.Sum, int64, error)
	// BufLen is the length of the buffer Stream reads with: a file it
	// holds whole need not be read again to be written (Preread.Whole).
	BufLen int
}

// ReadSource reads j's source for its digest once it has settled
// (AwaitSettled), and returns it still open: ErrChanged when it moved
// meanwhile (ChangedSince, Settling, or a length other than its stat's).
func ReadSource(ctx context.Context, j *PrereadJob) (_ *fileio.File, _ Preread, err error) {
	if err := AwaitSettled(ctx, &j.St, j.Res); err != nil {
		return nil, Preread{}, err
	}
	started := time.Now()
	f, err := j.Open()
	if err != nil {
		return nil, Preread{}, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	sum, n, err := j.Stream(f)
	if err != nil {
		return nil, Preread{}, err
	}
	after, err := f.Stat()
	if err != nil {
		return nil, Preread{}, err
	}
	if ChangedSince(j.St, j.InoLoose, &after) || n != j.St.Size || Settling(&after, started, j.Res) {
		return nil, Preread{}, ErrChanged
	}
	whole := !j.St.Sparse() && n > 0 && n <= int64(j.BufLen)
	return f, Preread{Sum: sum, N: n, Whole: whole, Started: started}, nil
}
