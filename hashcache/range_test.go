package hashcache

import (
	"path/filepath"
	"testing"
)

func TestRangeByPrefix(t *testing.T) {
	t.Parallel()
	c := openT(t, filepath.Join(t.TempDir(), "h.db"), Options{})
	for _, p := range []string{"/a/x", "/a/y/z", "/ab/q", "/b/r"} {
		c.Put(p, Entry{Size: int64(len(p))})
	}
	flushT(t, c)
	var got []string
	c.Range("/a/", func(p string, e Entry) bool {
		if e.Size != int64(len(p)) {
			t.Errorf("%q: size %d", p, e.Size)
		}
		got = append(got, p)
		return true
	})
	if len(got) != 2 || got[0] != "/a/x" || got[1] != "/a/y/z" {
		t.Fatalf("Range(/a/) = %v", got)
	}
	n := 0
	c.Range("/", func(string, Entry) bool { n++; return n < 3 })
	if n != 3 {
		t.Fatalf("Range did not stop when asked: %d calls", n)
	}
	closeT(t, c)
}
