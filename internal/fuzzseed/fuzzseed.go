// Package fuzzseed holds what the fuzz targets of names start from, shared
// by the packages whose tests fuzz paths and names (copyengine,
// internal/destfs): the odd names a tree from another system, a careless
// script or a hostile user can hold, and the test of a name a directory
// listing can give. Only tests import it.
package fuzzseed

import (
	"fmt"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/fastcopy/fastcopy/internal/destfs"
)

// ValidName reports whether s is a name a directory listing can give: one
// path component, neither "." nor "..", at most 255 bytes, no NUL.
func ValidName(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= 255 && !strings.ContainsAny(s, "/\x00")
}

// Names are the seeds: odd names, names at and around the 255-byte
// limit, names shaped like options, like patterns and like fastcopy's own
// temporaries (destfs.TempSuffix), and names shaped like the digest form
// of another name's temporary.
func Names() []string {
	long := strings.Repeat("x", 245)
	t := destfs.TempSuffix
	return []string{
		"a", "..", ".", "...", "a\x00b", "new\nline", "\n", "cr\r", "bad\xff\xfe", "\xc3",
		strings.Repeat("n", 255), strings.Repeat("n", 241), strings.Repeat("n", 242), strings.Repeat("n", 256),
		strings.Repeat("é", 127) + "x", "x" + strings.Repeat("é", 127),
		"-rf", "--force", "-", ".a" + t, t, "." + t, "sp ace", `back\slash`, "*", "[a]", "a?",
		fmt.Sprintf("%s~%016x", long[:200], xxh3.HashString(long)),
		fmt.Sprintf("a~%016x", xxh3.HashString("a\x00taken")),
	}
}
