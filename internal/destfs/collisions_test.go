package destfs

import (
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestCollisions: a name kept as it is wins over one decoded onto it,
// then the first in listing order; an excluded name takes no part.
func TestCollisions(t *testing.T) {
	names := []fileio.DirEntry{{Name: "a：b"}, {Name: "a:b"}, {Name: "c：d"}, {Name: "c⁚d"}, {Name: "x：y"}, {Name: "x:y"}}
	dst := []string{"a:b", "a:b", "c:d", "c:d", "x:y", "x:y"}
	errs := make([]error, len(names))
	excluded := []bool{false, false, false, false, false, true}
	Collisions(names, dst, errs, excluded)
	for i, fail := range []bool{true, false, false, true, false, false} {
		if (errs[i] != nil) != fail {
			t.Fatalf("%s: err %v, want failed %v", names[i].Name, errs[i], fail)
		}
	}
}
