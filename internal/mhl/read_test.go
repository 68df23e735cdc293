package mhl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyTree copies the fixture folder src to a new temporary folder.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// A history the reference implementation wrote, with two nested histories:
// the chains' C4 IDs and the references match, and every part is read.
func TestLoadReferenceHistory(t *testing.T) {
	h, err := Load(filepath.Join("testdata", "reference", "Reels"))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Generations) != 1 || len(h.Children) != 2 || len(h.Unchained) != 0 {
		t.Fatalf("%d generations, %d nested histories, unchained %q", len(h.Generations), len(h.Children), h.Unchained)
	}
	g := h.Generations[0]
	if g.Seq != 1 || g.FileName != "0001_Reels_2020-01-17_143000Z.mhl" || g.C4 != "c43Hnsy7HbEdsTVp49jdZvrHXCVnbUedhbpo5xwWXtVfMhobbJbMcyuhqQBc4d6P9iRaND9aGZQpyjPBSQYfrDMCMJ" {
		t.Errorf("generation %d %q %s", g.Seq, g.FileName, g.C4)
	}
	c := g.Creator
	if c.Tool != "ascmhl.py" || c.ToolVersion != "0.3 alpha" || c.Hostname != "myHost.local" || !c.Date.Equal(time.Date(2020, 1, 17, 14, 30, 0, 0, time.UTC)) {
		t.Errorf("creator %+v", c)
	}
	if g.Process != InPlace || strings.Join(g.Ignore, " ") != ".DS_Store ascmhl ascmhl/" {
		t.Errorf("process %q, ignore %q", g.Process, g.Ignore)
	}
	if g.Root == nil || g.Root.Content[0].Format != "xxh64" || g.Root.Content[0].Value != "92950bc8fda076ec" || g.Root.Structure[0].Value != "2c2ce52605558158" {
		t.Errorf("root hash %+v", g.Root)
	}
	if len(g.Dirs) != 2 || g.Dirs[0].Path != "A002R2EC" || g.Dirs[1].Structure[0].Value != "1131a950fcc55e4b" {
		t.Errorf("directory hashes %+v", g.Dirs)
	}
	if len(g.Files) != 1 || g.Files[0].Path != "Summary.txt" || g.Files[0].Size != 48 || g.Files[0].Hashes[0].Action != Original {
		t.Errorf("files %+v", g.Files)
	}
	if len(g.References) != 2 || g.References[0].Path != "A002R2EC/ascmhl/0002_A002R2EC_2020-01-17_143000Z.mhl" {
		t.Errorf("references %+v", g.References)
	}
	a := h.Children[0]
	if a.Prefix != "A002R2EC" || len(a.Generations) != 2 || a.Generations[1].Files[0].Hashes[0].Action != Verified {
		t.Errorf("nested history %q: %d generations", a.Prefix, len(a.Generations))
	}

	e, err := h.Expected()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range e.Files {
		got = append(got, f.Path)
		if f.HasSum || strings.Join(f.Formats, ",") != "xxh64" {
			t.Errorf("%q: HasSum %v, formats %q (the history records xxh64 only)", f.Path, f.HasSum, f.Formats)
		}
	}
	want := "A002R2EC/Clips/A002C006_141024_R2EC.mov A002R2EC/Clips/A002C007_141024_R2EC.mov A002R2EC/Sidecar.txt " +
		"A003R2EC/Clips/A003C011_141024_R2EC.mov A003R2EC/Clips/A003C012_141024_R2EC.mov A003R2EC/Sidecar.txt Summary.txt"
	if strings.Join(got, " ") != want {
		t.Errorf("expected files\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if !e.Ignored("A002R2EC/ascmhl/ascmhl_chain.xml", false) || !e.Ignored("A003R2EC/.DS_Store", false) || e.Ignored("A003R2EC/Sidecar.txt", false) {
		t.Error("ignore patterns not applied")
	}
}

// Changing one byte of a generation file, of a nested one (which its
// parent references), or removing one, fails Load with ErrTampered.
func TestLoadDetectsTampering(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		change     func(p string) error
	}{
		{"top generation changed", "ascmhl/0001_Reels_2020-01-17_143000Z.mhl", flipByte},
		{"nested generation changed", "A002R2EC/ascmhl/0002_A002R2EC_2020-01-17_143000Z.mhl", flipByte},
		{"older nested generation changed", "A003R2EC/ascmhl/0001_A003R2EC_2020-01-16_091500Z.mhl", flipByte},
		{"generation removed", "A002R2EC/ascmhl/0001_A002R2EC_2020-01-16_091500Z.mhl", os.Remove},
		{"chain removed", "ascmhl/ascmhl_chain.xml", os.Remove},
		{"nested generation and its chain rewritten", "A002R2EC/ascmhl/0002_A002R2EC_2020-01-17_143000Z.mhl", rewriteWithChain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", "reference", "Reels"))
			if err := tc.change(filepath.Join(root, tc.file)); err != nil {
				t.Fatal(err)
			}
			_, err := Load(root)
			var ce *ChainError
			if !errors.Is(err, ErrTampered) || !errors.As(err, &ce) {
				t.Fatalf("Load: %v, want ErrTampered", err)
			}
		})
	}
}

// flipByte changes one byte in the middle of the file p.
func flipByte(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	i := strings.Index(string(data), "<hostname>") + len("<hostname>")
	data[i] ^= 0x20
	return os.WriteFile(p, data, 0o644)
}

// rewriteWithChain changes the generation file p and records its new C4 ID
// in its chain, as a forger would: only a parent's reference tells.
func rewriteWithChain(p string) error {
	old, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := flipByte(p); err != nil {
		return err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	chain := filepath.Join(filepath.Dir(p), "ascmhl_chain.xml")
	c, err := os.ReadFile(chain)
	if err != nil {
		return err
	}
	return os.WriteFile(chain, []byte(strings.Replace(string(c), C4Bytes(old), C4Bytes(data), 1)), 0o644)
}

// A generation file the chain does not list (a write interrupted between
// the two) is reported, not read, and numbered past by the next write.
func TestUnchainedGeneration(t *testing.T) {
	root := card(t)
	if _, err := WriteGeneration(root, gen(listFiles(t, root), t0)); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(root, "ascmhl", "0002_A002R2EC_2026-11-30_100000Z.mhl")
	writeFile(t, stray, "<hashlist/>")
	h, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Unchained) != 1 || h.Unchained[0] != filepath.Base(stray) {
		t.Fatalf("unchained %q", h.Unchained)
	}
	w, err := WriteGeneration(root, gen(listFiles(t, root), t1))
	if err != nil {
		t.Fatal(err)
	}
	if w.Seq != 3 {
		t.Fatalf("next generation numbered %d, want 3", w.Seq)
	}
}

// A first write that stopped before the chain leaves a generation file and
// no chain: Load refuses the history, the next write numbers past it.
func TestGenerationWithoutChain(t *testing.T) {
	root := card(t)
	w, err := WriteGeneration(root, gen(listFiles(t, root), t0))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "ascmhl", "ascmhl_chain.xml")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(root); !errors.Is(err, ErrTampered) {
		t.Fatalf("Load without a chain: %v, want ErrTampered", err)
	}
	w2, err := WriteGeneration(root, gen(listFiles(t, root), t1))
	if err != nil {
		t.Fatal(err)
	}
	if w2.Seq != 2 {
		t.Fatalf("numbered %d, want 2", w2.Seq)
	}
	h, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Generations) != 1 || len(h.Unchained) != 1 || h.Unchained[0] != filepath.Base(w.Path) {
		t.Fatalf("%d generations, unchained %q", len(h.Generations), h.Unchained)
	}
}

func TestParseGenerationRejects(t *testing.T) {
	for _, doc := range []string{
		`<hashlist version="2.0"><creatorinfo/></hashlist>`,                                       // no namespace
		`<hashlist version="1.0" xmlns="urn:ASC:MHL:v2.0"/>`,                                      // version
		`<hashlist version="2.0" xmlns="urn:ASC:MHL:v2.0"><hashes><hash><path size="-1">a</path>`, // truncated
		`<hashlist version="2.0" xmlns="urn:ASC:MHL:v2.0"><hashes><hash><path size="x">a</path></hash></hashes></hashlist>`,
		`<hashlist version="2.0" xmlns="urn:ASC:MHL:v2.0"><hashes><hash><path>a</path><xxh128 action="copied">00</xxh128></hash></hashes></hashlist>`,
	} {
		if _, err := ParseGeneration([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
}

// What the reference implementation writes with -h md5 -h xxh128: both
// digests sorted by format, hash dates in local time with microseconds, no
// size attribute for an empty file, a rename as previousPath; and metadata
// elements, which are skipped.
func TestParseReferenceStyleGeneration(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<hashlist version="2.0" xmlns="urn:ASC:MHL:v2.0">
  <creatorinfo>
    <creationdate>2020-01-16T10:15:00+01:00</creationdate>
    <hostname>myHost.local</hostname>
    <tool version="1.0">ascmhl.py</tool>
    <author role="DIT" email="a@b.c" phone="+1">Ada</author>
  </creatorinfo>
  <processinfo>
    <process>in-place</process>
    <ignore>
      <pattern>.DS_Store</pattern>
      <pattern>ascmhl</pattern>
      <pattern>ascmhl/</pattern>
    </ignore>
  </processinfo>
  <hashes>
    <hash>
      <path lastmodificationdate="2020-01-15T14:00:00+01:00">empty.txt</path>
      <md5 action="original" hashdate="2020-01-16T10:15:00.123456+01:00">d41d8cd98f00b204e9800998ecf8427e</md5>
      <xxh128 action="original" hashdate="2020-01-16T10:15:00.123456+01:00">99aa06d3014798d86001c324468d497f</xxh128>
      <metadata><anything xmlns="urn:other">x</anything></metadata>
    </hash>
    <hash>
      <path size="3" lastmodificationdate="2020-01-15T14:00:00+01:00">B/new.txt</path>
      <xxh128 action="verified" hashdate="2020-01-16T10:15:00.5+01:00">A1B2C3D4E5F60718293A4B5C6D7E8F90</xxh128>
      <previousPath>A/old.txt</previousPath>
    </hash>
  </hashes>
</hashlist>
`
	g, err := ParseGeneration([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Files) != 2 || g.Files[0].Size != -1 || g.Files[1].PreviousPath != "A/old.txt" {
		t.Fatalf("files %+v", g.Files)
	}
	x, ok := g.Files[0].Find("xxh128")
	if !ok || x.Action != Original || !x.Date.Equal(time.Date(2020, 1, 16, 9, 15, 0, 123456000, time.UTC)) {
		t.Errorf("xxh128 %+v", x)
	}
	if a := g.Creator.Authors; len(a) != 1 || a[0] != (Author{Name: "Ada", Email: "a@b.c", Phone: "+1", Role: "DIT"}) {
		t.Errorf("authors %+v", a)
	}
	h := &History{Generations: []Generation{
		{FileName: "0001.mhl", Ignore: DefaultIgnore, Files: []FileHash{{Path: "A/old.txt", Size: 3, Hashes: []Hash{{Format: "xxh128", Value: "a1b2c3d4e5f60718293a4b5c6d7e8f90", Action: Original}}}}},
		{FileName: "0002.mhl", Ignore: g.Ignore, Files: g.Files},
	}}
	e, err := h.Expected()
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Files) != 2 || e.Files[0].Path != "B/new.txt" || !e.Files[0].HasSum || e.Files[1].Path != "empty.txt" || e.Files[1].Size != -1 {
		t.Fatalf("expected %+v (the renamed file is expected under its new name only)", e.Files)
	}
}
