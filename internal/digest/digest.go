// Package digest names the hash formats fastcopy writes into records or
// checks in records that other tools wrote, and computes several of them
// in one pass over a file's bytes.
//
// The copy's own checks are always xxh128. The other formats exist for
// records: ASC MHL histories (md5, sha1, c4, xxh32, xxh64, xxh3, xxh128),
// coreutils-style manifests (md5sum, sha1sum, sha256sum, sha512sum, b3sum)
// and BagIt bags (sha256, sha512).
package digest

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"math/big"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/blake3"
	"github.com/zeebo/xxh3"
)

// Format is one hash format, named as ASC MHL and the coreutils tools
// name it ("xxh128", "sha256", ...).
type Format struct {
	Name string
	// Crypto says whether the format resists a forger who crafts a
	// collision (sha256, sha512, blake3), not only accidents.
	Crypto bool
	// Rank orders formats by strength for choosing among several recorded
	// for one file: higher is stronger.
	Rank int
	// Size is the length of the raw digest in bytes.
	Size int
	new  func() hash.Hash
	enc  func([]byte) string
}

// New returns a fresh hash of this format.
func (f *Format) New() hash.Hash { return f.new() }

// Encode returns the text form records use for a raw digest: lower-case
// hex for every format except c4, which is a C4 ID.
func (f *Format) Encode(sum []byte) string { return f.enc(sum) }

// Equal reports whether two text digests of this format are the same.
// Hex digests compare case-insensitively; C4 IDs exactly.
func (f *Format) Equal(a, b string) bool {
	if f.Name == "c4" {
		return a == b
	}
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

var formats = map[string]*Format{}

func add(f *Format) { formats[f.Name] = f }

func init() {
	add(&Format{Name: "xxh32", Rank: 1, Size: 4, new: newXXH32, enc: hex.EncodeToString})
	add(&Format{Name: "xxh64", Rank: 2, Size: 8, new: func() hash.Hash { return xxhash.New() }, enc: hex.EncodeToString})
	add(&Format{Name: "xxh3", Rank: 3, Size: 8, new: func() hash.Hash { return xxh3.New() }, enc: hex.EncodeToString})
	add(&Format{Name: "md5", Rank: 4, Size: md5.Size, new: md5.New, enc: hex.EncodeToString})
	add(&Format{Name: "sha1", Rank: 5, Size: sha1.Size, new: sha1.New, enc: hex.EncodeToString})
	add(&Format{Name: "xxh128", Rank: 6, Size: 16, new: func() hash.Hash { return xxh3.New128() }, enc: hex.EncodeToString})
	add(&Format{Name: "sha256", Crypto: true, Rank: 7, Size: sha256.Size, new: sha256.New, enc: hex.EncodeToString})
	add(&Format{Name: "blake3", Crypto: true, Rank: 8, Size: 32, new: func() hash.Hash { return blake3.New() }, enc: hex.EncodeToString})
	add(&Format{Name: "sha512", Crypto: true, Rank: 9, Size: sha512.Size, new: sha512.New, enc: hex.EncodeToString})
	add(&Format{Name: "c4", Crypto: true, Rank: 10, Size: sha512.Size, new: sha512.New, enc: encodeC4})
}

// Lookup returns the format of that name (case-insensitive).
func Lookup(name string) (*Format, bool) {
	f, ok := formats[strings.ToLower(strings.TrimSpace(name))]
	return f, ok
}

// Names lists every format fastcopy knows, weakest first.
func Names() []string {
	var out []string
	for n := range formats {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return formats[out[i]].Rank < formats[out[j]].Rank })
	return out
}

// Parse reads a comma-separated list of format names ("xxh64,md5"),
// refusing unknown and repeated names.
func Parse(list string) ([]*Format, error) {
	var out []*Format
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		f, ok := formats[n]
		if !ok {
			return nil, fmt.Errorf("unknown hash format %q (known: %s)", n, strings.Join(Names(), ", "))
		}
		if seen[n] {
			return nil, fmt.Errorf("hash format %q named twice", n)
		}
		seen[n] = true
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no hash format named in %q", list)
	}
	return out, nil
}

// Strongest returns the strongest of the formats named, among those
// fastcopy knows; ok is false when it knows none of them.
func Strongest(names []string) (f *Format, ok bool) {
	for _, n := range names {
		if g, known := Lookup(n); known && (f == nil || g.Rank > f.Rank) {
			f = g
		}
	}
	return f, f != nil
}

// Set computes several formats over one stream of bytes: write the bytes
// once, read every digest at the end.
type Set struct {
	formats []*Format
	hashes  []hash.Hash
}

// NewSet returns a Set over the formats given.
func NewSet(fs []*Format) *Set {
	s := &Set{formats: fs}
	for _, f := range fs {
		s.hashes = append(s.hashes, f.New())
	}
	return s
}

// Write feeds p to every hash of the set. It never fails.
func (s *Set) Write(p []byte) (int, error) {
	for _, h := range s.hashes {
		h.Write(p)
	}
	return len(p), nil
}

// Sums returns each format's text digest, keyed by format name.
func (s *Set) Sums() map[string]string {
	out := make(map[string]string, len(s.hashes))
	for i, h := range s.hashes {
		out[s.formats[i].Name] = s.formats[i].Encode(h.Sum(nil))
	}
	return out
}

const c4Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// encodeC4 writes a SHA-512 digest as a C4 ID: "c4" and the digest as a
// base-58 number in 88 characters, left-padded with the alphabet's zero.
func encodeC4(sum []byte) string {
	n := new(big.Int).SetBytes(sum)
	base := big.NewInt(58)
	mod := new(big.Int)
	var b []byte
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		b = append(b, c4Alphabet[mod.Int64()])
	}
	for len(b) < 88 {
		b = append(b, '1')
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return "c4" + string(b)
}
