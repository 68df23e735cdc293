package verify

import (
	"encoding/hex"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Sum is an xxh128 digest.
type Sum = xxh3.Uint128

// Hex returns the digest as xxhsum -H2 prints it: 32 lower-case hex digits,
// high 64 bits first.
func Hex(s Sum) string {
	b := s.Bytes()
	return hex.EncodeToString(b[:])
}

// ParseHex reads a digest written by Hex.
func ParseHex(h string) (Sum, error) {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 16 {
		return Sum{}, fmt.Errorf("not an xxh128 digest: %q", h)
	}
	var s Sum
	for i := 0; i < 8; i++ {
		s.Hi = s.Hi<<8 | uint64(b[i])
		s.Lo = s.Lo<<8 | uint64(b[8+i])
	}
	return s, nil
}

// Hasher streams data into an xxh128 digest.
type Hasher struct{ h *xxh3.Hasher }

// NewHasher returns an empty Hasher.
func NewHasher() *Hasher { return &Hasher{h: xxh3.New()} }

// Reset empties the hasher for reuse.
func (h *Hasher) Reset() { h.h.Reset() }

// Write adds p to the digest.
func (h *Hasher) Write(p []byte) { _, _ = h.h.Write(p) }

// WriteZeros adds n zero bytes (a hole of a sparse file) to the digest.
func (h *Hasher) WriteZeros(n int64) {
	for n > 0 {
		c := int64(len(zeros))
		if n < c {
			c = n
		}
		h.Write(zeros[:c])
		n -= c
	}
}

// Sum returns the digest of what was written.
func (h *Hasher) Sum() Sum { return h.h.Sum128() }

// Bytes returns the digest of p in one call (the fastest path for a file
// read whole).
func Bytes(p []byte) Sum { return xxh3.Hash128(p) }

var zeros = make([]byte, 1<<16)
