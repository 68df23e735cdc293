package bagit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestArchivalWrite: Write's tag files for a payload, a manifest read back
// as written (names with CR, LF, a percent sign and a backslash), the
// fields Write computes replacing the caller's, and a bag in another
// format refused with nothing written.
func TestArchivalWrite(t *testing.T) {
	dir := t.TempDir()
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	files := []WriteFile{
		{Path: "b/new\nline", Size: 3, Digest: "BB"},
		{Path: "a 100%\\x\r", Size: 4, Digest: "aa"},
	}
	w, err := Write(&WriteInput{Root: d, Algorithm: "sha256", Files: files, Agent: "fastcopy test",
		Date: time.Date(2026, 12, 2, 10, 0, 0, 0, time.Local),
		Info: []WriteField{{"Source-Organization", "City Archives"}, {"Payload-Oxum", "1.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Oxum != "7.2" || w.Manifest != "manifest-sha256.txt" {
		t.Errorf("Written %+v", w)
	}
	man, _ := os.ReadFile(filepath.Join(dir, "manifest-sha256.txt"))
	if want := "aa  data/a 100%\\x%0D\nbb  data/b/new%0Aline\n"; string(man) != want {
		t.Errorf("manifest %q, want %q", man, want)
	}
	info, _ := os.ReadFile(filepath.Join(dir, "bag-info.txt"))
	if want := "Source-Organization: City Archives\nBagging-Date: 2026-12-02\nPayload-Oxum: 7.2\nBag-Software-Agent: fastcopy test\n"; string(info) != want {
		t.Errorf("bag-info.txt %q, want %q", info, want)
	}
	got, err := WriteReadManifest(d, "sha256")
	if err != nil || len(got) != 2 || got["b/new\nline"] != "bb" || got["a 100%\\x\r"] != "aa" {
		t.Errorf("WriteReadManifest = %q, %v", got, err)
	}
	fields, err := WriteReadInfo(d)
	if err != nil || len(fields) != 4 || fields[0] != (WriteField{"Source-Organization", "City Archives"}) {
		t.Errorf("WriteReadInfo = %v, %v", fields, err)
	}
	tm, _ := os.ReadFile(filepath.Join(dir, "tagmanifest-sha256.txt"))
	if n := strings.Count(string(tm), "\n"); n != 3 {
		t.Errorf("tagmanifest has %d lines:\n%s", n, tm)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d entries in the bag, want the 4 tag files", len(ents))
	}
	if _, err := Write(&WriteInput{Root: d, Algorithm: "sha512", Files: files}); err == nil || !strings.Contains(err.Error(), "manifest-sha256.txt") {
		t.Errorf("a sha512 bag over a sha256 one: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest-sha512.txt")); err == nil {
		t.Errorf("manifest-sha512.txt written by a refused Write")
	}
	for _, f := range []WriteField{{"", "x"}, {"A:B", "x"}, {" A", "x"}, {"A", "two\nlines"}} {
		if WriteCheckField(f.Label, f.Value) == nil {
			t.Errorf("field %q accepted", f)
		}
	}
}
