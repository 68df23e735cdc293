package hashcache

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestArchivalDigestsRoundTrip: an entry's digests in other formats are
// stored and read back with it, and the value of an entry without any
// is the value an earlier fastcopy wrote (the fields it knows, then an
// empty Digests it skips), so old values read as before and new ones
// still read in an old fastcopy.
func TestArchivalDigestsRoundTrip(t *testing.T) {
	e := base
	e.Digests = JoinDigests(map[string]string{
		"sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"md5":    "d41d8cd98f00b204e9800998ecf8427e",
		"c4":     "c459dsjfscH38cYeXXYogktxf4Cd9ibshE3BHUo6a58hBXmRQdZrAkZzsWcbWtDg5oQstpDuni4Hirj75GEmTc1sFT",
	})
	if e.Digests != "c4:c459dsjfscH38cYeXXYogktxf4Cd9ibshE3BHUo6a58hBXmRQdZrAkZzsWcbWtDg5oQstpDuni4Hirj75GEmTc1sFT md5:d41d8cd98f00b204e9800998ecf8427e sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("JoinDigests = %q: not sorted by format", e.Digests)
	}
	v := encodeValue(nil, "/k", e)
	got, ok := decodeValue("/k", v)
	if !ok || got != e {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", e, got, ok)
	}
	if m := got.DigestMap(); len(m) != 3 || m["md5"] != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("DigestMap = %v", m)
	}
	// Without digests: the old fields, then a zero length.
	plain := encodeValue(nil, "/k", base)
	body := plain[:len(plain)-checkLen]
	if body[len(body)-1] != 0 {
		t.Fatalf("a value without digests does not end in an empty Digests field: % x", body)
	}
	// A value an earlier fastcopy wrote ends after the flags: it reads
	// with no digests.
	old := append([]byte(nil), body[:len(body)-1]...)
	old = append(old, 0, 0, 0, 0)
	putCheck(old, "/k")
	if got, ok := decodeValue("/k", old); !ok || got != base {
		t.Errorf("a value of an earlier version: %+v, %v; want %+v", got, ok, base)
	}
	// An earlier fastcopy reads the fields it knows from a new value:
	// the same bytes up to its last field.
	if !bytes.HasPrefix(v, body[:len(body)-1]) {
		t.Errorf("the value with digests changes the fields before them")
	}
	// Stored and looked up through the cache.
	c, err := Open(filepath.Join(t.TempDir(), "h.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Put("/k", e)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if r := c.Lookup([]string{"/k"}); !r[0].Found || r[0].Entry.Digests != e.Digests {
		t.Errorf("Lookup = %+v", r[0])
	}
}

// putCheck writes the check of v's body into its last four bytes.
func putCheck(v []byte, key string) {
	body := v[:len(v)-checkLen]
	c := check(key, body)
	v[len(body)], v[len(body)+1], v[len(body)+2], v[len(body)+3] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
}
