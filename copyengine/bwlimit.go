package copyengine

import "github.com/fastcopy/fastcopy/internal/throttle"

// throttleFor is the --bwlimit meter of a run with options o (package
// throttle says what is charged): nil without a limit.
func throttleFor(o *Options) *throttle.Meter {
	return throttle.New(throttle.Config{BytesPerSec: o.BwLimit, Throttle: o.throttle})
}

// copyRangePieces copies the file with copy_file_range, in pieces no
// larger than --bwlimit's burst, each charged as it is done. It returns the
// bytes copied (fewer than the file's size when the source ended early).
func (fc *fileCopy) copyRangePieces() (int64, error) {
	e := fc.cp.e
	return e.bw.Pieces(e.ctx, fc.en.st.Size, func(off, n int64) (int64, error) {
		return fc.dst.CopyRange(fc.src, off, off, n)
	})
}
