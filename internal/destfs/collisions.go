package destfs

import (
	"fmt"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Collisions fails the source names that land on a destination name
// another source name has (dstNames, by index of names, as Map gave
// them; errs holds Map's errors and gets the collisions): decoding is not
// one to one ("a:b" and "a：b" both decode to "a:b"). A name kept as it
// is wins, then the first in listing order; the others are failed, never
// let replace it. Excluded names take no part.
func Collisions(names []fileio.DirEntry, dstNames []string, errs []error, excluded []bool) {
	owner := make(map[string]string, len(names))
	for i, n := range names {
		if errs[i] == nil && !excluded[i] && dstNames[i] == n.Name {
			owner[n.Name] = n.Name
		}
	}
	for i, n := range names {
		if errs[i] != nil || excluded[i] || dstNames[i] == n.Name {
			continue
		}
		if prev, ok := owner[dstNames[i]]; ok {
			errs[i] = fmt.Errorf("name becomes %q in the destination, as %q does", dstNames[i], prev)
			continue
		}
		owner[dstNames[i]] = n.Name
	}
}
