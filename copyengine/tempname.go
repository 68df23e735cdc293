package copyengine

import (
	"fmt"
	"strings"

	"github.com/zeebo/xxh3"
)

const tempSuffix = ".fastcopy-tmp"

// tempName is the hidden name a file is written under before it is
// renamed onto name: ".NAME.fastcopy-tmp". A name too long for that keeps
// its first bytes and a digest of the whole, so it stays unique and within
// the 255-byte limit of a name.
func tempName(name string) string {
	t := "." + name + tempSuffix
	if len(t) <= 255 {
		return t
	}
	return fmt.Sprintf(".%s~%016x%s", name[:200], xxh3.HashString(name), tempSuffix)
}

// isTempName reports whether name looks like a temporary of fastcopy's.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix) && len(name) > len(tempSuffix)+1
}
