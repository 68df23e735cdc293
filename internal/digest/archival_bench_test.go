package digest

import (
	"hash"
	"testing"

	zeebo "github.com/zeebo/blake3"
	luke "lukechampine.com/blake3"
)

// Each format's cost over a 1 MiB buffer (the copy's read size): MB/s is
// bytes hashed per second on one core. Compare with benchstat:
//
//	go test -run '^$' -bench Archival -count 6 ./internal/digest
//
// BenchmarkArchivalFormat/blake3 is zeebo/blake3, the implementation
// Lookup("blake3") returns; BenchmarkArchivalBlake3 sets it beside
// lukechampine.com/blake3 (v1.4.1), the other assembly-optimised Go
// implementation, single-threaded as a copy worker hashes, and lukechampine's
// multi-threaded mode (it spreads one large input over the cores).
func BenchmarkArchivalFormat(b *testing.B) {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for _, name := range []string{"xxh128", "xxh3", "xxh64", "md5", "sha1", "sha256", "sha512", "blake3"} {
		f, _ := Lookup(name)
		b.Run(name, func(b *testing.B) { archivalBench(b, f.New(), buf) })
	}
}

func BenchmarkArchivalBlake3(b *testing.B) {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	b.Run("zeebo", func(b *testing.B) { archivalBench(b, zeebo.New(), buf) })
	b.Run("lukechampine", func(b *testing.B) { archivalBench(b, luke.New(32, nil), buf) })
}

// archivalBench hashes buf b.N times. Besides MB/s (wall time, which a
// busy machine stretches) it reports cpu-s/GiB: the process's CPU time per
// GiB hashed, which waiting for a core does not count.
func archivalBench(b *testing.B, h hash.Hash, buf []byte) {
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	cpu0 := archivalCPU()
	n := 0
	for b.Loop() {
		h.Write(buf)
		n++
	}
	_ = h.Sum(nil)
	if cpu := archivalCPU() - cpu0; n > 0 && cpu > 0 {
		b.ReportMetric(cpu.Seconds()/(float64(n)*float64(len(buf))/(1<<30)), "cpu-s/GiB")
	}
}
