package update

import "github.com/fastcopy/fastcopy/internal/fileio"

// Config is the rule's whole input: the options.
type Config struct {
	IgnoreExisting bool // --ignore-existing
	Update         bool // --update (-u)
}

// Keeps reports whether --ignore-existing or --update leaves the
// destination dst of the source entry src as it is (dst nil: there is
// none): for --ignore-existing, any existing destination name of a source
// entry that is not a directory; for --update, a regular file whose
// destination is a regular file with a newer mtime, at the coarser
// resolution of the two filesystems (gran, in nanoseconds), so that a
// copy whose mtime its filesystem truncated never counts as newer.
func (c Config) Keeps(src, dst *fileio.Stat, gran int64) bool {
	if dst == nil || src.IsDir() {
		return false
	}
	if c.IgnoreExisting {
		return true
	}
	if c.Update && src.IsRegular() && dst.IsRegular() {
		g := max(gran, 1)
		return floorDiv(dst.Mtime, g) > floorDiv(src.Mtime, g)
	}
	return false
}

// floorDiv is a/b rounded towards minus infinity (an mtime before 1970
// is negative).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
