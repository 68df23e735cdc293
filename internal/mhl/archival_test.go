package mhl

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/fastcopy/fastcopy/verify"
)

// TestArchivalFormats: a generation with Formats records each file in
// each format (the xxh128 from Sum, the others from Extra), in the
// schema's order whatever the order asked, with directory hashes of each
// format computed from the files' digests of that format; a file without
// a digest of a format asked for is an error, and nothing is written.
func TestArchivalFormats(t *testing.T) {
	root := t.TempDir()
	contents := map[string][]byte{"a": []byte("alpha"), "b": []byte("bravo")}
	var files []File
	for _, name := range []string{"a", "b"} {
		b := contents[name]
		m := md5.Sum(b)
		x := xxhash.Sum64(b)
		files = append(files, File{Path: name, Size: int64(len(b)), ModTime: time.Unix(1, 0), Sum: verify.Bytes(b),
			Extra: map[string]string{"md5": hex.EncodeToString(m[:]), "xxh64": hexU64(x)}})
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := WriteGeneration(root, &NewGeneration{Formats: []string{"xxh64", "md5"}, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	if i, j := bytes.Index(data, []byte("<md5")), bytes.Index(data, []byte("<xxh64")); i < 0 || j < 0 || i > j {
		t.Errorf("md5 at %d, xxh64 at %d: the schema puts md5 first", i, j)
	}
	if bytes.Contains(data, []byte("<xxh128")) {
		t.Errorf("xxh128 recorded though not asked for")
	}
	if xmllint, err := exec.LookPath("xmllint"); err != nil {
		t.Log("xmllint not installed (apt-get install libxml2-utils): the schema is not checked")
	} else if out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join("testdata", "xsd", "ASCMHL.xsd"), w.Path).CombinedOutput(); err != nil {
		t.Errorf("the generation against ASCMHL.xsd: %v\n%s", err, out)
	}
	h, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	g := h.Generations[0]
	for _, f := range g.Files {
		if len(f.Hashes) != 2 || f.Hashes[0].Format != "md5" || f.Hashes[1].Format != "xxh64" || f.Hashes[0].Action != Original {
			t.Errorf("%s: %+v", f.Path, f.Hashes)
		}
	}
	// The root's md5 content hash: md5 of the files' raw md5 digests,
	// sorted, concatenated.
	var raws [][]byte
	for _, b := range contents {
		m := md5.Sum(b)
		raws = append(raws, m[:])
	}
	sort.Slice(raws, func(i, j int) bool { return bytes.Compare(raws[i], raws[j]) < 0 })
	want := md5.Sum(bytes.Join(raws, nil))
	if g.Root == nil || len(g.Root.Content) != 2 || g.Root.Content[0].Format != "md5" || g.Root.Content[0].Value != hex.EncodeToString(want[:]) {
		t.Errorf("root content hashes %+v, want md5 %x first", g.Root, want)
	}

	files[1].Extra = map[string]string{"md5": files[1].Extra["md5"]}
	if _, err := WriteGeneration(root, &NewGeneration{Formats: []string{"xxh64", "md5"}, Files: files}); err == nil {
		t.Errorf("a file without its xxh64 was recorded")
	}
	if h, err := Load(root); err != nil || len(h.Generations) != 1 {
		t.Errorf("after the refused generation: %v generations, %v", len(h.Generations), err)
	}
}

func hexU64(x uint64) string {
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = byte(x)
		x >>= 8
	}
	return hex.EncodeToString(b[:])
}
