package digest

import (
	"strings"
	"testing"
)

// The expected digests were computed with xxhsum (-H0..-H3), md5sum,
// sha1sum, sha256sum and the C4 ID algorithm of the ASC MHL reference
// implementation, over the same bytes.
func TestKnownDigests(t *testing.T) {
	in := "The quick brown fox jumps over the lazy dog, 0123456789 twice over"
	want := map[string]string{
		"xxh32":  "827cfcaf",
		"xxh64":  "f427b217684543bf",
		"xxh3":   "21b2d77afc024bb4",
		"xxh128": "9ccfc9d97adc056c7bca4c7d33c2a9f1",
		"md5":    "f385d604c6f58fbc5d5aeac4b3eee454",
		"sha1":   "498bd1d0a38d50f3d92e58179cf4a6e5e454a4f6",
		"sha256": "38a861606de5e009cb7ba18c7749def749552e502655ac9cd4a02d819b069d55",
		"c4":     "c44qtYNkud3Qb1bPP1P4d2H5m8WmAGCuAfw5RvGZQhH2dzWNZeSngDzc7EaWEAtvJprqFiMS2sHeQ6ARJh13Eh2FeW",
	}
	var fs []*Format
	for n := range want {
		f, ok := Lookup(n)
		if !ok {
			t.Fatalf("Lookup(%q) not found", n)
		}
		fs = append(fs, f)
	}
	s := NewSet(fs)
	// Written in uneven pieces, to cross every hash's block boundary.
	for p := in; p != ""; {
		k := min(len(p), 7)
		s.Write([]byte(p[:k]))
		p = p[k:]
	}
	got := s.Sums()
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: got %s, want %s", n, got[n], w)
		}
	}
}

func TestEmptyInput(t *testing.T) {
	for n, w := range map[string]string{
		"xxh32": "02cc5d05",
		"xxh64": "ef46db3751d8e999",
		// The BLAKE3 specification's digest of the empty input.
		"blake3": "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
		"c4":     "c459dsjfscH38cYeXXYogktxf4Cd9ibshE3BHUo6a58hBXmRQdZrAkZzsWcbWtDg5oQstpDuni4Hirj75GEmTc1sFT",
	} {
		f, _ := Lookup(n)
		if got := f.Encode(f.New().Sum(nil)); got != w {
			t.Errorf("%s of nothing: got %s, want %s", n, got, w)
		}
	}
}

func TestParse(t *testing.T) {
	fs, err := Parse("xxh64, MD5")
	if err != nil || len(fs) != 2 || fs[0].Name != "xxh64" || fs[1].Name != "md5" {
		t.Fatalf("Parse: %v %v", fs, err)
	}
	for _, bad := range []string{"", "crc32", "md5,md5"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if _, err := Parse("crc32"); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("unknown-format error does not list the known ones: %v", err)
	}
	if f, ok := Strongest([]string{"md5", "xxh64", "bogus"}); !ok || f.Name != "md5" {
		t.Errorf("Strongest: %v %v", f, ok)
	}
}
