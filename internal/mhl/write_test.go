package mhl

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/verify"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var (
	t0 = time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	t1 = time.Date(2026, 12, 1, 14, 30, 5, 0, time.UTC)
)

// card builds a small camera card below a folder named A002R2EC and
// returns its path.
func card(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "A002R2EC")
	for p, c := range map[string]string{
		"Clips/A002C006.mov": "clip six\n",
		"Clips/A002C007.mov": "clip seven\n",
		"Sidecar.txt":        "sidecar & <notes>\n",
		"Empty.txt":          "",
		".DS_Store":          "finder",
		"Clips/.DS_Store":    "finder",
	} {
		writeFile(t, filepath.Join(root, p), c)
	}
	if err := os.MkdirAll(filepath.Join(root, "Proxy", "Low"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"Clips", "Proxy/Low", "Proxy"} {
		if err := os.Chtimes(filepath.Join(root, d), t0, t0.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func writeFile(t *testing.T, p, c string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listFiles returns the files below root as a copy would hand them over:
// path, size, mtime and the xxh128 of their content. The ascmhl folder is
// left out; .DS_Store is not (the ignore patterns leave it out).
func listFiles(t *testing.T, root string) []File {
	t.Helper()
	var out []File
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "ascmhl" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, File{Path: filepath.ToSlash(rel), Size: int64(len(data)), ModTime: t0.Add(-24 * time.Hour), Sum: verify.Bytes(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gen(files []File, at time.Time) *NewGeneration {
	return &NewGeneration{
		Creator: Creator{Date: at, Hostname: "dit-cart.local", ToolVersion: "1.2.3",
			Authors: []Author{{Name: "Ada Lovelace", Email: "ada@example.com", Role: "DIT"}}, Location: "Stage 5", Comment: "day 1"},
		Process: Transfer,
		Files:   files,
		Dirs:    []Dir{{Path: "Proxy/Low", ModTime: t0}},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it):\n%s", name, t.Name(), got)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Two generations of one folder, byte for byte: the first records every
// file as original, the rerun (one file changed, one added) continues the
// numbering, records verified and failed, and leaves the first untouched.
func TestWriteGenerationGolden(t *testing.T) {
	root := card(t)
	w1, err := WriteGeneration(root, gen(listFiles(t, root), t0))
	if err != nil {
		t.Fatal(err)
	}
	if w1.Seq != 1 || filepath.Base(w1.Path) != "0001_A002R2EC_2026-11-30_091500Z.mhl" {
		t.Fatalf("first generation: %+v", w1)
	}
	g1 := readFile(t, w1.Path)
	golden(t, "gen1.mhl", g1)
	golden(t, "chain1.xml", readFile(t, filepath.Join(root, "ascmhl", "ascmhl_chain.xml")))
	if w1.C4 != C4Bytes(g1) {
		t.Errorf("C4 %s, file has %s", w1.C4, C4Bytes(g1))
	}

	writeFile(t, filepath.Join(root, "Sidecar.txt"), "sidecar, changed\n")
	writeFile(t, filepath.Join(root, "Clips", "A002C008.mov"), "clip eight\n")
	if err := os.Chtimes(filepath.Join(root, "Clips"), t1, t1); err != nil {
		t.Fatal(err)
	}
	ng := gen(listFiles(t, root), t1)
	ng.Ignore = []string{"*.tmp"}
	w2, err := WriteGeneration(root, ng)
	if err != nil {
		t.Fatal(err)
	}
	if w2.Seq != 2 || filepath.Base(w2.Path) != "0002_A002R2EC_2026-12-01_143005Z.mhl" {
		t.Fatalf("second generation: %+v", w2)
	}
	golden(t, "gen2.mhl", readFile(t, w2.Path))
	golden(t, "chain2.xml", readFile(t, filepath.Join(root, "ascmhl", "ascmhl_chain.xml")))
	if !bytes.Equal(readFile(t, w1.Path), g1) {
		t.Error("the rerun changed the first generation")
	}
	ents, _ := os.ReadDir(filepath.Join(root, "ascmhl"))
	if len(ents) != 3 {
		t.Errorf("ascmhl holds %d entries, want 2 generations and the chain (no temporaries)", len(ents))
	}

	h, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Generations) != 2 || h.Generations[1].Creator.Tool != "fastcopy" || h.Generations[1].Creator.ToolVersion != "1.2.3" {
		t.Fatalf("loaded %+v", h.Generations)
	}
	e, err := h.Expected()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range e.Files {
		paths = append(paths, f.Path)
		if f.Path == "Sidecar.txt" && f.Sum != verify.Bytes([]byte("sidecar & <notes>\n")) {
			t.Errorf("Sidecar.txt expected with %s, not its original digest", verify.Hex(f.Sum))
		}
	}
	if got := strings.Join(paths, " "); got != "Clips/A002C006.mov Clips/A002C007.mov Clips/A002C008.mov Empty.txt Sidecar.txt" {
		t.Errorf("expected files: %s", got)
	}
	if !e.Ignored("x/y.tmp", false) || !e.Ignored("Clips/.DS_Store", false) || e.Ignored("Clips/A002C006.mov", false) {
		t.Error("ignore patterns of the latest generation not applied")
	}
}

// The golden files are valid against the specification's schemas.
func TestGoldenValidatesAgainstXSD(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not installed (apt-get install libxml2-utils): the schemas are not checked")
	}
	for _, c := range []struct{ xsd, file string }{
		{"ASCMHL.xsd", "gen1.mhl"},
		{"ASCMHL.xsd", "gen2.mhl"},
		{"ASCMHLDirectory.xsd", "chain1.xml"},
		{"ASCMHLDirectory.xsd", "chain2.xml"},
	} {
		out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join("testdata", "xsd", c.xsd), filepath.Join("testdata", "golden", c.file)).CombinedOutput()
		if err != nil {
			t.Errorf("%s against %s: %v\n%s", c.file, c.xsd, err, out)
		}
	}
}

// A name XML cannot hold is refused, and nothing is written.
func TestWriteGenerationRefusesNamesXMLCannotHold(t *testing.T) {
	root := card(t)
	_, err := WriteGeneration(root, gen([]File{{Path: "bad\x01name", Size: 1}}, t0))
	if err == nil {
		t.Fatal("a control character in a name was written")
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "ascmhl")); len(ents) != 0 {
		t.Errorf("ascmhl holds %d entries after a refused write", len(ents))
	}
}

// A generation is not written on top of a history that fails its chain.
func TestWriteGenerationRefusesTamperedHistory(t *testing.T) {
	root := card(t)
	w, err := WriteGeneration(root, gen(listFiles(t, root), t0))
	if err != nil {
		t.Fatal(err)
	}
	data := readFile(t, w.Path)
	if err := os.WriteFile(w.Path, bytes.Replace(data, []byte("dit-cart"), []byte("dit-kart"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteGeneration(root, gen(listFiles(t, root), t1)); !errors.Is(err, ErrTampered) {
		t.Fatalf("WriteGeneration on a changed history: %v, want ErrTampered", err)
	}
}
