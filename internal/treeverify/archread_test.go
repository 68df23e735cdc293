package treeverify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/digest"
)

// archreadVectors are the digests of "a\n" as md5sum, sha1sum, sha256sum,
// sha512sum, b3sum, xxhsum -H0..-H3 and the ASC MHL reference
// implementation's C4 print them.
var archreadVectors = map[string]string{
	"md5":    "60b725f10c9c85c70d97880dfe8191b3",
	"sha1":   "3f786850e387550fdab836ed7e6dc881de23001b",
	"sha256": "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7",
	"sha512": "162b0b32f02482d5aca0a7c93dd03ceac3acd7e410a5f18f3fb990fc958ae0df6f32233b91831eaf99ca581a8c4ddf9c8ba315ac482db6d4ea01cc7884a635be",
	"blake3": "81c4b7f7e0549f1514e9cae97cf40cf133920418d3dc71bedbf60ec9bd6148cb",
	"xxh32":  "994d9585",
	"xxh64":  "fbbde8981eccc855",
	"xxh128": "5c73e7e3dcbb0395e841f27363849a18",
	"xxh3":   "e841f27363849a18",
	"c4":     "c41Shy18FZhatSXQUeMY2uNTk1DzWeA6H4fX1argjohqPE4dzAjSnFBSjM7HjnhYVhTc9pZWz5hXzpahcYKmb98kyj",
}

// TestArchreadCheckDigests: a file listed with a digest in every format
// matches each (all computed in its one read); a wrong digest in any one
// is a difference naming that format and its record; a listed file that
// is gone is missing.
func TestArchreadCheckDigests(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := func() []Digest {
		var ds []Digest
		for _, n := range digest.Names() {
			f, _ := digest.Lookup(n)
			v, ok := archreadVectors[n]
			if !ok {
				t.Fatalf("no vector for %s", n)
			}
			ds = append(ds, Digest{Format: f, Value: v, From: n + ".list"})
		}
		return ds
	}
	r, err := CheckDigests(context.Background(), []DigestEntry{{Path: "a.txt", Digests: all()}}, dir, TreeOptions{FromCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Files != 1 || r.Bytes != 2 {
		t.Fatalf("every format's vector: %+v", r)
	}
	for _, n := range digest.Names() {
		ds := all()
		for i := range ds {
			if ds[i].Format.Name == n {
				b := []byte(ds[i].Value)
				b[len(b)-1] ^= 1
				ds[i].Value = string(b)
			}
		}
		r, err := CheckDigests(context.Background(), []DigestEntry{{Path: "a.txt", Digests: ds}, {Path: "gone.txt", Digests: ds[:1]}}, dir, TreeOptions{FromCache: true})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Diff{}
		for _, d := range r.Diffs {
			got[d.Path] = d
		}
		d := got["a.txt"]
		if len(r.Diffs) != 2 || d.Kind != Differ || !strings.HasPrefix(d.Detail, n+" ") || strings.Contains(d.Detail, ";") || !strings.Contains(d.Detail, "by "+n+".list") || got["gone.txt"].Kind != Missing {
			t.Errorf("%s spoilt: %+v", n, r.Diffs)
		}
	}
}
