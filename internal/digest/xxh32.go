package digest

import (
	"encoding/binary"
	"hash"
	"math/bits"
)

// xxh32 is XXH32 with seed 0, which ASC MHL lists as a format. No
// well-kept Go module for it is at hand, and it is short.
type xxh32 struct {
	v     [4]uint32
	total uint64
	buf   [16]byte
	n     int
}

const (
	p32a uint32 = 2654435761
	p32b uint32 = 2246822519
	p32c uint32 = 3266489917
	p32d uint32 = 668265263
	p32e uint32 = 374761393
)

func newXXH32() hash.Hash { h := &xxh32{}; h.Reset(); return h }

func (h *xxh32) Reset() {
	a, b := p32a, p32b // variables: the sums wrap, as the algorithm means
	h.v = [4]uint32{a + b, b, 0, -a}
	h.total, h.n = 0, 0
}

func (h *xxh32) Size() int      { return 4 }
func (h *xxh32) BlockSize() int { return 16 }

func round32(v, in uint32) uint32 {
	return bits.RotateLeft32(v+in*p32b, 13) * p32a
}

func (h *xxh32) Write(p []byte) (int, error) {
	n := len(p)
	h.total += uint64(n)
	if h.n > 0 {
		c := copy(h.buf[h.n:], p)
		h.n += c
		p = p[c:]
		if h.n < 16 {
			return n, nil
		}
		h.block(h.buf[:])
		h.n = 0
	}
	for len(p) >= 16 {
		h.block(p[:16])
		p = p[16:]
	}
	h.n = copy(h.buf[:], p)
	return n, nil
}

func (h *xxh32) block(b []byte) {
	for i := range h.v {
		h.v[i] = round32(h.v[i], binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func (h *xxh32) Sum(b []byte) []byte {
	var acc uint32
	if h.total >= 16 {
		acc = bits.RotateLeft32(h.v[0], 1) + bits.RotateLeft32(h.v[1], 7) +
			bits.RotateLeft32(h.v[2], 12) + bits.RotateLeft32(h.v[3], 18)
	} else {
		acc = h.v[2] + p32e
	}
	acc += uint32(h.total)
	p := h.buf[:h.n]
	for len(p) >= 4 {
		acc += binary.LittleEndian.Uint32(p) * p32c
		acc = bits.RotateLeft32(acc, 17) * p32d
		p = p[4:]
	}
	for _, c := range p {
		acc += uint32(c) * p32e
		acc = bits.RotateLeft32(acc, 11) * p32a
	}
	acc ^= acc >> 15
	acc *= p32b
	acc ^= acc >> 13
	acc *= p32c
	acc ^= acc >> 16
	return binary.BigEndian.AppendUint32(b, acc)
}
