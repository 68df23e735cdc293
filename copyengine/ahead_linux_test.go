//go:build linux

package copyengine

import (
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestAheadGrowsTableOnce: a budget that has handed out aheadGrow
// descriptors grows the descriptor table for all it may hand out (plus the
// run's own), so that holding thousands open does not double the table
// seven times; one that hands out fewer leaves it alone.
func TestAheadGrowsTableOnce(t *testing.T) {
	size := func() int {
		n, err := fileio.DescriptorTableSize()
		if err != nil {
			t.Skipf("the descriptor table's size is not known here: %v", err)
		}
		return n
	}
	before := size()
	max := int64(4 * before)
	if lim := fileio.OpenLimit(); lim > 0 && int(max)+256 > lim {
		t.Skipf("the descriptor limit (%d) is too low to grow the table to %d", lim, max+256)
	}
	b := &aheadBudget{max: max}
	for range aheadGrow - 1 {
		b.take()
	}
	if got := size(); got != before {
		t.Fatalf("table grew to %d with %d descriptors taken (below aheadGrow)", got, aheadGrow-1)
	}
	b.take()
	if got := size(); got < int(max) {
		t.Errorf("table holds %d after %d descriptors taken of a budget of %d", got, aheadGrow, max)
	}
}
