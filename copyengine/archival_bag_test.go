package copyengine_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// archivalBagManifest is the payload manifest a bag of files must have,
// with sha256 (or sha512) digests of their bytes.
func archivalBagManifest(files map[string][]byte, alg string) string {
	var rels []string
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var b strings.Builder
	for _, rel := range rels {
		var d []byte
		if alg == "sha512" {
			s := sha512.Sum512(files[rel])
			d = s[:]
		} else {
			s := sha256.Sum256(files[rel])
			d = s[:]
		}
		p := strings.NewReplacer("\r", "%0D", "\n", "%0A").Replace("data/" + rel)
		b.WriteString(hex.EncodeToString(d) + "  " + p + "\n")
	}
	return b.String()
}

func archivalRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	noErr(t, err)
	return string(b)
}

// archivalCheckBag checks a bag's tag files against the payload it must
// hold: the manifest's digests are the files' bytes', Payload-Oxum
// counts them, the tag manifest holds the tag files' digests.
func archivalCheckBag(t *testing.T, bag string, files map[string][]byte, alg string) {
	t.Helper()
	man := archivalRead(t, filepath.Join(bag, "manifest-"+alg+".txt"))
	if want := archivalBagManifest(files, alg); man != want {
		t.Errorf("manifest-%s.txt:\n%s\nwant:\n%s", alg, man, want)
	}
	if got := archivalRead(t, filepath.Join(bag, "bagit.txt")); got != "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n" {
		t.Errorf("bagit.txt: %q", got)
	}
	info := archivalRead(t, filepath.Join(bag, "bag-info.txt"))
	if want := fmt.Sprintf("Payload-Oxum: %d.%d\n", archivalPayload(files), len(files)); !strings.Contains(info, want) {
		t.Errorf("bag-info.txt:\n%s\nwant %q", info, want)
	}
	if !strings.Contains(info, "Bagging-Date: 20") {
		t.Errorf("bag-info.txt has no Bagging-Date:\n%s", info)
	}
	tm := archivalRead(t, filepath.Join(bag, "tagmanifest-"+alg+".txt"))
	for _, name := range []string{"manifest-" + alg + ".txt", "bagit.txt", "bag-info.txt"} {
		b := []byte(archivalRead(t, filepath.Join(bag, name)))
		var d string
		if alg == "sha512" {
			s := sha512.Sum512(b)
			d = hex.EncodeToString(s[:])
		} else {
			s := sha256.Sum256(b)
			d = hex.EncodeToString(s[:])
		}
		if !strings.Contains(tm, d+"  "+name+"\n") {
			t.Errorf("tagmanifest-%s.txt lacks %s's digest:\n%s", alg, name, tm)
		}
	}
	ents, err := os.ReadDir(bag)
	noErr(t, err)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left in the bag", e.Name())
		}
	}
}

// TestArchivalBag: --bag copies the sources into DEST/data and writes the
// bag's tag files from the digests taken in the same read: the run reads
// what the plain copy reads, each source byte once.
func TestArchivalBag(t *testing.T) {
	src, base, files := archivalTree(t)
	plain, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: filepath.Join(base, "plain"), Dedup: "off"})
	noErr(t, err)
	for _, alg := range []string{"sha256", "sha512"} {
		t.Run(alg, func(t *testing.T) {
			bag := filepath.Join(base, "bag-"+alg)
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: bag, Bag: true, BagHash: alg, Dedup: "off",
				BagInfo: []string{"Source-Organization=City Archives", "Contact-Name: Jo Doe"}})
			noErr(t, err)
			if sum.BytesRead != plain.BytesRead {
				t.Errorf("the bag's run read %d B, the plain copy %d B: a digest cost a read", sum.BytesRead, plain.BytesRead)
			}
			if sum.Bag != bag || sum.BagOxum != fmt.Sprintf("%d.%d", archivalPayload(files), len(files)) {
				t.Errorf("summary: bag %q, oxum %q", sum.Bag, sum.BagOxum)
			}
			finalFilesMatch(t, src, filepath.Join(bag, "data"))
			archivalCheckBag(t, bag, files, alg)
			info := archivalRead(t, filepath.Join(bag, "bag-info.txt"))
			if !strings.HasPrefix(info, "Source-Organization: City Archives\nContact-Name: Jo Doe\n") {
				t.Errorf("bag-info.txt:\n%s", info)
			}
		})
	}
}

// TestArchivalBagRerun: a rerun updates the bag. New and changed files
// are copied and listed with their new digests, unchanged ones again with
// theirs. A file the source no longer has keeps its line while data/
// holds it (no --delete), and loses it with --delete, which removes it.
// bag-info.txt keeps the fields given before, those given again replace
// theirs. A payload file nobody vouches for fails by name; a bag in
// another manifest format is refused before anything is copied.
func TestArchivalBagRerun(t *testing.T) {
	src, base, files := archivalTree(t)
	bag := filepath.Join(base, "bag")
	opt := copyengine.Options{Sources: []string{src}, Dest: bag, Bag: true, BagInfo: []string{"Source-Organization=City Archives", "External-Identifier=A-1"}}
	_, err := runEngine(t, opt)
	noErr(t, err)
	archivalCheckBag(t, bag, files, "sha256")

	files["new.txt"] = []byte("new\n")
	files["a.txt"] = []byte("alpha, changed\n")
	writeFile(t, filepath.Join(src, "new.txt"), files["new.txt"])
	writeFile(t, filepath.Join(src, "a.txt"), files["a.txt"])
	noErr(t, os.Remove(filepath.Join(src, "sub/c.bin")))
	settleSources()
	opt.BagInfo = []string{"External-Identifier=A-2"}
	sum, err := runEngine(t, opt)
	noErr(t, err)
	if sum.Copied != 2 {
		t.Errorf("rerun copied %d, want 2 (new.txt, a.txt)", sum.Copied)
	}
	archivalCheckBag(t, bag, files, "sha256") // sub/c.bin still in data/ and listed
	info := archivalRead(t, filepath.Join(bag, "bag-info.txt"))
	if !strings.HasPrefix(info, "Source-Organization: City Archives\nExternal-Identifier: A-2\nBagging-Date: ") || strings.Contains(info, "A-1") {
		t.Errorf("bag-info.txt after the rerun:\n%s", info)
	}

	opt.Delete = true
	sum, err = runEngine(t, opt)
	noErr(t, err)
	delete(files, "sub/c.bin")
	if sum.Deleted != 1 {
		t.Errorf("--delete removed %d, want 1", sum.Deleted)
	}
	archivalCheckBag(t, bag, files, "sha256")

	// A file put into data/ by hand: not in the manifest, named.
	writeFile(t, filepath.Join(bag, "data", "stray"), []byte("stray\n"))
	ev := &events{}
	opt.Delete, opt.OnEvent = false, ev.record
	if _, err := runEngine(t, opt); !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Errorf("a stray payload file: %v, want ErrSomeFailed", err)
	}
	if f := ev.failures()["stray"]; f == nil || !strings.Contains(f.Error(), "neither copied by this run nor listed in the bag's manifest") {
		t.Errorf("stray: %v", f)
	}
	noErr(t, os.Remove(filepath.Join(bag, "data", "stray")))

	opt.BagHash, opt.OnEvent = "sha512", nil
	_, err = runEngine(t, opt)
	var r *copyengine.RefusalError
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "manifest-sha256.txt") {
		t.Errorf("a sha512 run on a sha256 bag: %v, want a refusal naming manifest-sha256.txt", err)
	}
	archivalCheckBag(t, bag, files, "sha256")
}

// TestArchivalBagRefused: what a bag cannot be made of is refused before
// anything is written.
func TestArchivalBagRefused(t *testing.T) {
	src, base, _ := archivalTree(t)
	for _, opt := range []copyengine.Options{
		{Bag: true, BagHash: "md5"},
		{Bag: true, MHL: true},
		{Bag: true, BagInfo: []string{"no separator"}},
		{Bag: true, BagInfo: []string{"Key=two\nlines"}},
		{BagHash: "sha256"},
		{BagInfo: []string{"A=b"}},
	} {
		opt.Sources, opt.Dest = []string{src}, filepath.Join(base, "bag")
		_, err := runEngine(t, opt)
		var r *copyengine.RefusalError
		if !errors.As(err, &r) {
			t.Errorf("%+v: %v, want a refusal", opt, err)
		}
		if _, err := os.Lstat(filepath.Join(base, "bag")); err == nil {
			t.Errorf("%+v: the bag's folder made by a refused run", opt)
		}
	}
}

// archivalBagitPython returns a function that runs bagit-python (its
// source at $FASTCOPY_BAGIT_PYTHON: github.com/LibraryOfCongress/bagit-python)
// on a bag, giving its output and exit code, or skips the test.
func archivalBagitPython(t *testing.T) func(args ...string) (string, int) {
	t.Helper()
	root := os.Getenv("FASTCOPY_BAGIT_PYTHON")
	if root == "" {
		t.Skip("skipping: FASTCOPY_BAGIT_PYTHON is not set (the path of bagit-python's source, github.com/LibraryOfCongress/bagit-python)")
	}
	if _, err := os.Stat(filepath.Join(root, "src", "bagit", "__init__.py")); err != nil {
		t.Skipf("skipping: FASTCOPY_BAGIT_PYTHON=%s holds no src/bagit/__init__.py: %v", root, err)
	}
	py := archivalPython(t, "sys")
	meta := t.TempDir() // it asks its package metadata for its version
	dist := filepath.Join(meta, "bagit-0.0.0.dist-info")
	noErr(t, os.Mkdir(dist, 0o755))
	noErr(t, os.WriteFile(filepath.Join(dist, "METADATA"), []byte("Metadata-Version: 2.1\nName: bagit\nVersion: 0.0.0\n"), 0o644))
	return func(args ...string) (string, int) {
		cmd := exec.Command(py, append([]string{"-c", "import sys, bagit; sys.argv[0] = 'bagit.py'; bagit.main()"}, args...)...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "src")+string(os.PathListSeparator)+meta)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("bagit.py: %v", err)
		}
		t.Logf("$ bagit.py %s (exit %d)\n%s", strings.Join(args, " "), code, out)
		return string(out), code
	}
}

// TestArchivalBagByBagitPython: bags fastcopy writes (sha256 and sha512,
// names with a newline, a backslash and a percent sign, a rerun that
// updated one) validate with the Library of Congress's bagit-python; a
// changed byte, a missing file, an extra payload file and a wrong
// Payload-Oxum each fail there, named.
func TestArchivalBagByBagitPython(t *testing.T) {
	bagit := archivalBagitPython(t)
	src, base, files := archivalTree(t)
	files["100%.txt"] = []byte("percent\n")
	writeFile(t, filepath.Join(src, "100%.txt"), files["100%.txt"])
	settleSources()
	for _, alg := range []string{"sha256", "sha512"} {
		bag := filepath.Join(base, "bag-"+alg)
		_, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: bag, Bag: true, BagHash: alg, BagInfo: []string{"Source-Organization=City Archives"}})
		noErr(t, err)
		if out, code := bagit("--validate", bag); code != 0 || !strings.Contains(out, "is valid") {
			t.Errorf("%s: bagit.py --validate: exit %d", alg, code)
		}
	}
	bag := filepath.Join(base, "bag-sha256")
	writeFile(t, filepath.Join(src, "later.txt"), []byte("later\n"))
	settleSources()
	_, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: bag, Bag: true})
	noErr(t, err)
	if out, code := bagit("--validate", bag); code != 0 || !strings.Contains(out, "is valid") {
		t.Errorf("after a rerun: bagit.py --validate: exit %d", code)
	}

	p := filepath.Join(bag, "data", "sub", "c.bin")
	orig, err := os.ReadFile(p)
	noErr(t, err)
	for _, c := range []struct {
		what, want string
		spoil      func()
		undo       func()
	}{
		{"a changed byte", "data/sub/c.bin", func() {
			b := append([]byte(nil), orig...)
			b[10] ^= 1
			noErr(t, os.WriteFile(p, b, 0o644))
		}, func() { noErr(t, os.WriteFile(p, orig, 0o644)) }},
		{"a missing file", "data/sub/c.bin", func() { noErr(t, os.Rename(p, p+".away")) }, func() { noErr(t, os.Rename(filepath.Join(base, "c.bin.away"), p)) }},
		{"an extra payload file", "data/extra", func() { writeFile(t, filepath.Join(bag, "data", "extra"), []byte("x")) }, func() { noErr(t, os.Remove(filepath.Join(bag, "data", "extra"))) }},
	} {
		c.spoil()
		if c.what == "a missing file" {
			noErr(t, os.Rename(p+".away", filepath.Join(base, "c.bin.away")))
		}
		// bagit-python checks Payload-Oxum first: a missing or an extra
		// file fails there, counted, before the completeness check that
		// would name it.
		if out, code := bagit("--validate", bag); code == 0 || !strings.Contains(out, c.want) && !strings.Contains(out, "Payload-Oxum validation failed") {
			t.Errorf("%s: bagit.py --validate: exit %d, want a failure naming %s or the Payload-Oxum", c.what, code, c.want)
		}
		if c.what != "a changed byte" {
			if out, code := bagit("--validate", "--completeness-only", bag); code == 0 {
				t.Errorf("%s: bagit.py --validate --completeness-only: exit 0\n%s", c.what, out)
			}
		}
		c.undo()
	}
	// A wrong Payload-Oxum: the tag manifest is written anew over the
	// changed bag-info.txt, so that only the count is wrong.
	info := archivalRead(t, filepath.Join(bag, "bag-info.txt"))
	n := len(files) + 1
	wrong := strings.Replace(info, fmt.Sprintf(".%d\n", n), fmt.Sprintf(".%d\n", n+1), 1)
	if wrong == info {
		t.Fatalf("no Payload-Oxum ending .%d in:\n%s", n, info)
	}
	noErr(t, os.WriteFile(filepath.Join(bag, "bag-info.txt"), []byte(wrong), 0o644))
	if out, code := bagit("--validate", "--completeness-only", bag); code == 0 || !strings.Contains(out, "Payload-Oxum validation failed") {
		t.Errorf("a wrong Payload-Oxum: bagit.py --validate --completeness-only: exit %d", code)
	}
}
