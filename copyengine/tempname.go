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

// altTempName is the temporary name of name when a source file in the same
// directory already has the name tempName gives (".a.fastcopy-tmp" beside
// "a", as in a copy of an interrupted run's destination): still a
// temporary's name, so a leftover is removed, with a digest in it that no
// source name matches by chance.
func altTempName(name string) string {
	n := name
	if len(n) > 200 {
		n = n[:200]
	}
	return fmt.Sprintf(".%s~%016x%s", n, xxh3.HashString(name+"\x00taken"), tempSuffix)
}

// isTempName reports whether name looks like a temporary of fastcopy's.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix) && len(name) > len(tempSuffix)+1
}
