package verify

import (
	"strings"
	"testing"
)

// TestArchreadFormatFromName: the names manifests go by say their format;
// others say nothing.
func TestArchreadFormatFromName(t *testing.T) {
	for name, want := range map[string]string{
		"manifest-sha256.txt": "sha256", "tagmanifest-sha512.txt": "sha512", "/bag/manifest-md5.txt": "md5",
		"SHA256SUMS": "sha256", "MD5SUMS": "md5", "B3SUMS": "blake3", "SHA1SUMS": "sha1", "sha512sum.txt": "sha512",
		"photos.md5": "md5", "photos.sha256": "sha256", "photos.b3": "blake3", "photos.xxh128": "xxh128",
		"photos.xxh3": "xxh3", "photos.xxh64": "xxh64", "photos.xxh32": "xxh32", "photos.xxh128.txt": "xxh128",
		"photos.txt": "", "list": "", "checksum.txt": "", "manifest-sha3_256.txt": "", "photos.c4": "", "": "",
	} {
		got := ""
		if f := FormatFromName(name); f != nil {
			got = f.Name
		}
		if got != want {
			t.Errorf("FormatFromName(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestArchreadReadDigests: each form of line, and how a GNU line's format
// is decided: --manifest-hash, then the file name, then the length.
func TestArchreadReadDigests(t *testing.T) {
	const (
		md5a    = "60b725f10c9c85c70d97880dfe8191b3"
		sha256a = "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"
	)
	type line struct{ path, format, value string }
	for _, tc := range []struct {
		name, text string
		want       []line
		guessed    bool
	}{
		{"list", md5a + "  a.txt\n", []line{{"a.txt", "xxh128", md5a}}, true},
		{"MD5SUMS", md5a + " *a.txt\n", []line{{"a.txt", "md5", md5a}}, false},
		{"list", sha256a + "  dir/b c.txt\n", []line{{"dir/b c.txt", "sha256", sha256a}}, true},
		{"B3SUMS", sha256a + "  x\n", []line{{"x", "blake3", sha256a}}, false},
		{"list", "994d9585  a.txt\nfbbde8981eccc855  b\n", []line{{"a.txt", "xxh32", "994d9585"}, {"b", "xxh64", "fbbde8981eccc855"}}, false},
		{"list", "XXH3 (a.txt) = e841f27363849a18\n", []line{{"a.txt", "xxh3", "e841f27363849a18"}}, false},
		{"list", "SHA256 (a (1).txt) = " + sha256a + "\n", []line{{"a (1).txt", "sha256", sha256a}}, false},
		{"list", "MD5 (a.txt) = " + md5a + "\r\n# comment\n\n", []line{{"a.txt", "md5", md5a}}, false},
		{"list", "\\" + md5a + "  new\\nline\\\\x\n", []line{{"new\nline\\x", "xxh128", md5a}}, true},
		{"manifest-sha256.txt", md5a + "  a.txt\n", []line{{"a.txt", "xxh128", md5a}}, true}, // the name's format has another length
	} {
		got, err := ReadDigests(strings.NewReader(tc.text), tc.name, nil)
		if err != nil {
			t.Errorf("%s %q: %v", tc.name, tc.text, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s %q: %d entries, want %d", tc.name, tc.text, len(got), len(tc.want))
			continue
		}
		for i, w := range tc.want {
			g := got[i]
			if g.Path != w.path || g.Format.Name != w.format || g.Value != w.value || (i == 0 && g.Guessed != tc.guessed) {
				t.Errorf("%s %q: entry %d = %q %s %s guessed %v, want %q %s %s guessed %v", tc.name, tc.text, i, g.Path, g.Format.Name, g.Value, g.Guessed, w.path, w.format, w.value, tc.guessed)
			}
		}
	}
	for _, bad := range []string{
		"SHA384 (a.txt) = 00\n",           // a tag fastcopy does not know: named
		"123  a.txt\n",                    // no format of that length
		"zz  a.txt\n",                     // not hex
		"MD5 (a.txt) = " + sha256a + "\n", // the tag's format has another length
		md5a + "\n",                       // no path
	} {
		if _, err := ReadDigests(strings.NewReader(bad), "list", nil); err == nil {
			t.Errorf("%q read without an error", bad)
		} else if strings.HasPrefix(bad, "SHA384") && !strings.Contains(err.Error(), "SHA384") {
			t.Errorf("%q: %v does not name the format", bad, err)
		}
	}
}
