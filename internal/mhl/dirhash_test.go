package mhl

import (
	"crypto/md5"
	"encoding/hex"
	"testing"
)

func md5Bytes(p []byte) []byte { s := md5.Sum(p); return s[:] }

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The reference implementation's test of the hash of a hash list: the
// list is sorted and its raw bytes concatenated.
func TestHashOfListKnownAnswer(t *testing.T) {
	list := [][]byte{unhex(t, "bb"), unhex(t, "aa10"), unhex(t, "aa01"), unhex(t, "aa")}
	if got := hex.EncodeToString(hashOfList(list, xxh128Bytes)); got != "9041108a28887a9d35b4eac5bbaa5794" {
		t.Fatalf("xxh128 of the list = %s", got)
	}
	if got := hex.EncodeToString(hashOfList(list, md5Bytes)); got != "88abf5c156ff637c6380ae461fc50c3f" {
		t.Fatalf("md5 of the list = %s", got)
	}
}

// The reference implementation's directory hashes of a folder B holding
// B1.txt ("B1\n"), in md5 (the definition does not depend on the format).
func TestDirHashKnownAnswer(t *testing.T) {
	b := newDirNode("B", "B")
	b.children["B1.txt"] = &node{name: "B1.txt", path: "B/B1.txt", content: md5Bytes([]byte("B1\n"))}
	hashTree(b, md5Bytes)
	if got := hex.EncodeToString(b.content); got != "d6df246725efff6ceaee31f663a32cf8" {
		t.Errorf("content = %s", got)
	}
	if got := hex.EncodeToString(b.structure); got != "a21e164c1df944733e5e3d4e4ed64f90" {
		t.Errorf("structure = %s", got)
	}
}

// Empty directories: content and structure are the digest of nothing; a
// directory of empty directories has that content hash too but another
// structure hash (the names count).
func TestDirHashEmpty(t *testing.T) {
	root, err := buildTree(nil, []Dir{{Path: "e"}, {Path: "c/ca"}, {Path: "c/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	hashTree(root, xxh128Bytes)
	empty := hex.EncodeToString(xxh128Bytes(nil))
	e, c := root.children["e"], root.children["c"]
	if hex.EncodeToString(e.content) != empty || hex.EncodeToString(e.structure) != empty {
		t.Errorf("empty dir: %x %x, want %s", e.content, e.structure, empty)
	}
	if hex.EncodeToString(c.structure) == empty || hex.EncodeToString(c.content) == empty {
		t.Errorf("dir of empty dirs: %x %x", c.content, c.structure)
	}
}

func TestBuildTreeRejects(t *testing.T) {
	for _, tc := range []struct {
		files []File
		dirs  []Dir
	}{
		{files: []File{{Path: "a"}, {Path: "a"}}},
		{files: []File{{Path: "a"}, {Path: "a/b"}}},
		{files: []File{{Path: "../a"}}},
		{files: []File{{Path: "/a"}}},
		{files: []File{{Path: "a//b"}}},
		{files: []File{{Path: ""}}},
	} {
		if _, err := buildTree(tc.files, tc.dirs); err == nil {
			t.Errorf("buildTree(%v, %v) accepted", tc.files, tc.dirs)
		}
	}
}
