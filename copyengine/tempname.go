package copyengine

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

const tempSuffix = ".fastcopy-tmp"

// tempName is the hidden name a file is written under before it is
// renamed onto name: ".NAME.fastcopy-tmp". A name too long for that keeps
// its first bytes and a digest of the whole, so it stays unique and within
// the 255-byte limit of a name. So does a name that ends like that digest
// form ("~" and 16 hex digits): its plain temporary could otherwise be the
// temporary of another name, and two files would write to one temporary.
func tempName(name string) string {
	t := "." + name + tempSuffix
	if len(t) <= 255 && !digestShaped(name) {
		return t
	}
	return digestTemp(name, xxh3.HashString(name))
}

// digestTemp is ".PREFIX~DIGEST.fastcopy-tmp", PREFIX the first 200 bytes
// of name at most, cut between characters so that a UTF-8 name keeps a
// UTF-8 temporary (some filesystems accept no other names).
func digestTemp(name string, digest uint64) string {
	n := name
	if len(n) > 200 {
		i := 200
		for i > 200-utf8.UTFMax && !utf8.RuneStart(n[i]) {
			i--
		}
		n = n[:i]
	}
	return fmt.Sprintf(".%s~%016x%s", n, digest, tempSuffix)
}

// digestShaped reports whether name ends like the digest form of
// digestTemp: "~" and 16 lower-case hex digits.
func digestShaped(name string) bool {
	if len(name) < 17 || name[len(name)-17] != '~' {
		return false
	}
	for _, c := range []byte(name[len(name)-16:]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// altTempName is the temporary name of name when a source file in the same
// directory already has the name tempName gives (".a.fastcopy-tmp" beside
// "a", as in a copy of an interrupted run's destination): still a
// temporary's name, so a leftover is removed, with a digest in it that no
// source name matches by chance.
func altTempName(name string) string {
	return digestTemp(name, xxh3.HashString(name+"\x00taken"))
}

// freeTempName is altTempName of name, unless a source name of the same
// directory is that too (taken), as names made to collide can be: then a
// digest of a further try, until one is free.
func freeTempName(name string, taken func(string) bool) string {
	t := altTempName(name)
	for i := 1; taken(t); i++ {
		t = digestTemp(name, xxh3.HashString(name+"\x00taken"+strconv.Itoa(i)))
	}
	return t
}

// isTempName reports whether name looks like a temporary of fastcopy's.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix) && len(name) > len(tempSuffix)+1
}
