package destfs

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

// TempSuffix ends every temporary name of fastcopy's: a file being
// written, a staged directory, a probe. A run removes what it finds so
// named and recorded as made by a run (see IsTempName).
const TempSuffix = ".fastcopy-tmp"

// TempName is the hidden name a file is written under before it is
// renamed onto name: ".NAME.fastcopy-tmp". A name too long for that keeps
// its first bytes and a digest of the whole, so it stays unique and within
// the 255-byte limit of a name. So does a name that ends like that digest
// form ("~" and 16 hex digits): its plain temporary could otherwise be the
// temporary of another name, and two files would write to one temporary.
func TempName(name string) string {
	t := "." + name + TempSuffix
	if len(t) <= 255 && !digestShaped(name) {
		return t
	}
	return DigestTemp(name, xxh3.HashString(name))
}

// DigestTemp is ".PREFIX~DIGEST.fastcopy-tmp", PREFIX the first 200 bytes
// of name at most, cut between characters so that a UTF-8 name keeps a
// UTF-8 temporary (some filesystems accept no other names).
func DigestTemp(name string, digest uint64) string {
	n := name
	if len(n) > 200 {
		i := 200
		for i > 200-utf8.UTFMax && !utf8.RuneStart(n[i]) {
			i--
		}
		n = n[:i]
	}
	return fmt.Sprintf(".%s~%016x%s", n, digest, TempSuffix)
}

// digestShaped reports whether name ends like the digest form of
// DigestTemp: "~" and 16 lower-case hex digits.
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

// AltTempName is the temporary name of name when a source file in the same
// directory already has the name TempName gives (".a.fastcopy-tmp" beside
// "a", as in a copy of an interrupted run's destination): still a
// temporary's name, so a leftover is removed, with a digest in it that no
// source name matches by chance.
func AltTempName(name string) string {
	return DigestTemp(name, xxh3.HashString(name+"\x00taken"))
}

// FreeTempName is AltTempName of name, unless a source name of the same
// directory is that too (taken), as names made to collide can be: then a
// digest of a further try, until one is free.
func FreeTempName(name string, taken func(string) bool) string {
	t := AltTempName(name)
	for i := 1; taken(t); i++ {
		t = DigestTemp(name, xxh3.HashString(name+"\x00taken"+strconv.Itoa(i)))
	}
	return t
}

// IsTempName reports whether name looks like a temporary of fastcopy's.
func IsTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, TempSuffix) && len(name) > len(TempSuffix)+1
}
