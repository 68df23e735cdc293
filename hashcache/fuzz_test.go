package hashcache

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
	bolt "go.etcd.io/bbolt"
)

// FuzzEntryEncoding round-trips entries through the value encoding and
// arbitrary byte strings, as paths, through a real cache; it also feeds raw
// bytes to the decoder, which must never panic. Every input is committed, so
// minimizing a new input takes many commits: run it with a short
// -fuzzminimizetime (go test -fuzz FuzzEntryEncoding -fuzzminimizetime 5s).
func FuzzEntryEncoding(f *testing.F) {
	f.Add("/home/alice/a.txt", int64(4096), base.Mtime, base.Ctime, uint64(42), uint64(1), uint64(2), base.HashedAt, []byte{})
	f.Add("/a/\xff\xfe\x00not-utf8", int64(-1), int64(-1), int64(1<<62), ^uint64(0), ^uint64(0), uint64(0), int64(-1<<63), []byte{0x80, 0x80})
	f.Add("", int64(0), int64(0), int64(0), uint64(0), uint64(0), uint64(0), int64(0), []byte("garbage"))
	f.Add(strings.Repeat("/deep", bolt.MaxKeySize/5+1), int64(1), int64(2), int64(3), uint64(4), uint64(5), uint64(6), int64(7), []byte{})
	f.Add("relative/path", int64(1)<<40, int64(1)<<62, int64(-1)<<62, uint64(1), uint64(0), uint64(0), int64(0), encodeValue(nil, "relative/path", base))

	testBoltOptions = func(o *bolt.Options) { o.NoSync = true } // one commit per input
	c, err := Open(filepath.Join(f.TempDir(), "hashes.db"), Options{})
	if err != nil {
		testBoltOptions = nil
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close(); testBoltOptions = nil })

	f.Fuzz(func(t *testing.T, path string, size, mtime, ctime int64, ino, hi, lo uint64, hashedAt int64, raw []byte) {
		e := Entry{Size: size, Mtime: mtime, Ctime: ctime, Ino: ino, Sum: xxh3.Uint128{Hi: hi, Lo: lo}, HashedAt: hashedAt}
		v := encodeValue(nil, path, e)
		if len(v) > maxValLen {
			t.Fatalf("value of %d bytes > maxValLen", len(v))
		}
		if got, ok := decodeValue(path, v); !ok || got != e {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", e, got, ok)
		}
		// Appended fields (a later version's) are skipped.
		body := append(v[:len(v)-checkLen:len(v)-checkLen], raw...)
		w := binary.BigEndian.AppendUint32(body, check(path, body))
		if got, ok := decodeValue(path, w); !ok || got != e {
			t.Fatalf("with %d appended bytes: %+v, %v", len(raw), got, ok)
		}
		decodeValue(path, raw) // must not panic

		c.Put(path, e)
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		got, ok := c.Get(path)
		if validKey(path) != ok || ok && got != e {
			t.Fatalf("Get(%q) = %+v, %v; want %+v (valid key %v)", path, got, ok, e, validKey(path))
		}
		if r := c.Lookup([]string{path}); r[0].Found != ok || r[0].Entry != got {
			t.Fatalf("Lookup disagrees with Get: %+v", r[0])
		}
	})
}
