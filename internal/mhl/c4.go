package mhl

import (
	"crypto/sha512"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// c4Alphabet is the base58 alphabet of C4 IDs (SMPTE ST 2114): digits and
// letters without 0, O, I and l, in ASCII order.
const c4Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// c4Len is the length of every C4 ID: "c4" and 88 base58 digits.
const c4Len = 90

// C4 returns the C4 ID of what r yields: its SHA-512 digest read as one
// big-endian number, written in base58 with c4Alphabet, padded on the left
// with '1' (the zero digit) to 88 digits and prefixed with "c4".
func C4(r io.Reader) (string, error) {
	h := sha512.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return c4ID(h.Sum(nil)), nil
}

// C4Bytes returns the C4 ID of p.
func C4Bytes(p []byte) string {
	d := sha512.Sum512(p)
	return c4ID(d[:])
}

func c4ID(digest []byte) string {
	n := new(big.Int).SetBytes(digest)
	base := big.NewInt(58)
	mod := new(big.Int)
	digits := make([]byte, 0, c4Len)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		digits = append(digits, c4Alphabet[mod.Int64()])
	}
	for len(digits) < c4Len-2 {
		digits = append(digits, c4Alphabet[0])
	}
	var b strings.Builder
	b.Grow(c4Len)
	b.WriteString("c4")
	for i := len(digits) - 1; i >= 0; i-- {
		b.WriteByte(digits[i])
	}
	return b.String()
}

// ParseC4 returns the SHA-512 digest a C4 ID stands for, or an error when
// id is not one.
func ParseC4(id string) ([64]byte, error) {
	var out [64]byte
	if len(id) != c4Len || !strings.HasPrefix(id, "c4") {
		return out, fmt.Errorf("not a C4 ID (\"c4\" and 88 base58 digits): %q", id)
	}
	n := new(big.Int)
	base := big.NewInt(58)
	for i := 2; i < len(id); i++ {
		v := strings.IndexByte(c4Alphabet, id[i])
		if v < 0 {
			return out, fmt.Errorf("not a C4 ID (%q is not a base58 digit): %q", id[i], id)
		}
		n.Mul(n, base)
		n.Add(n, big.NewInt(int64(v)))
	}
	if n.BitLen() > 512 {
		return out, fmt.Errorf("not a C4 ID (more than 512 bits): %q", id)
	}
	n.FillBytes(out[:])
	return out, nil
}
