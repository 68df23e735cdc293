package verify

import (
	"strings"
	"testing"
)

// FuzzArchreadReadDigests: ReadDigests never panics, and what it reads is
// whole: a path, and a hex digest of its format's length.
func FuzzArchreadReadDigests(f *testing.F) {
	for _, s := range []string{
		"60b725f10c9c85c70d97880dfe8191b3  a.txt\n",
		"SHA256 (a (1).txt) = 87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7\n",
		"\\994d9585  new\\nline\n",
		"XXH3 (a) = e841f27363849a18\r\n# c\n\n",
		"fbbde8981eccc855 *b\n",
	} {
		f.Add(s, "list")
		f.Add(s, "MD5SUMS")
	}
	f.Fuzz(func(t *testing.T, text, name string) {
		got, err := ReadDigests(strings.NewReader(text), name, nil)
		if err != nil {
			return
		}
		for _, e := range got {
			if e.Path == "" || e.Format == nil || len(e.Value) != 2*e.Format.Size || !isHex(e.Value) {
				t.Fatalf("%q (%q): entry %+v", text, name, e)
			}
		}
	})
}
