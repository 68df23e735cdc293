package mhl

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseGeneration: any input is parsed or refused, never a panic; what
// parses and can be written again parses back to the same generation.
func FuzzParseGeneration(f *testing.F) {
	for _, p := range []string{
		"testdata/golden/gen1.mhl",
		"testdata/golden/gen2.mhl",
		"testdata/reference/Reels/ascmhl/0001_Reels_2020-01-17_143000Z.mhl",
		"testdata/reference/Reels/A002R2EC/ascmhl/0002_A002R2EC_2020-01-17_143000Z.mhl",
	} {
		data, err := os.ReadFile(filepath.FromSlash(p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGeneration(data)
		if err != nil {
			return
		}
		out, err := marshalGeneration(g)
		if err != nil {
			return
		}
		g2, err := ParseGeneration(out)
		if err != nil {
			t.Fatalf("written generation does not parse: %v\n%s", err, out)
		}
		out2, err := marshalGeneration(g2)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("written twice differs: %v\n%s\n%s", err, out, out2)
		}
	})
}
