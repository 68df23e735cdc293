package copyengine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// archivalPython returns a python3 that imports the modules named, or
// skips the test saying why.
func archivalPython(t *testing.T, modules string) string {
	t.Helper()
	var tried []string
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(py)
		if err != nil {
			tried = append(tried, py+": "+err.Error())
			continue
		}
		out, err := exec.Command(p, "-c", "import "+modules).CombinedOutput()
		if err == nil {
			return p
		}
		tried = append(tried, p+": "+strings.TrimSpace(lastLine(string(out))))
	}
	t.Skipf("skipping: no python3 imports %s (%s); on Debian: apt-get install python3-click python3-lxml python3-packaging python3-pathspec python3-requests python3-xxhash python3-dateutil", modules, strings.Join(tried, "; "))
	return ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// archivalASCMHL returns a function that runs the ASC MHL reference
// implementation (its source at $FASTCOPY_ASCMHL: github.com/ascmitc/mhl)
// from its source: "ascmhl" or "ascmhl-debug" and their arguments, giving
// the output and the exit code. It skips the test where the source or
// its Python modules are not found.
func archivalASCMHL(t *testing.T) func(tool string, args ...string) (string, int) {
	t.Helper()
	root := os.Getenv("FASTCOPY_ASCMHL")
	if root == "" {
		t.Skip("skipping: FASTCOPY_ASCMHL is not set (the path of the ASC MHL reference implementation's source, github.com/ascmitc/mhl)")
	}
	if _, err := os.Stat(filepath.Join(root, "ascmhl", "cli", "ascmhl.py")); err != nil {
		t.Skipf("skipping: FASTCOPY_ASCMHL=%s holds no ascmhl/cli/ascmhl.py: %v", root, err)
	}
	py := archivalPython(t, "lxml, click, xxhash, dateutil, pathspec, packaging, requests")
	// It asks its package metadata for its version: give it some, as an
	// installed copy would have.
	meta := t.TempDir()
	dist := filepath.Join(meta, "ascmhl-0.0.0.dist-info")
	noErr(t, os.Mkdir(dist, 0o755))
	noErr(t, os.WriteFile(filepath.Join(dist, "METADATA"), []byte("Metadata-Version: 2.1\nName: ascmhl\nVersion: 0.0.0\n"), 0o644))
	return func(tool string, args ...string) (string, int) {
		mod, fn := "ascmhl.cli.ascmhl", "mhltool_cli"
		if tool == "ascmhl-debug" {
			mod, fn = "ascmhl.cli.ascmhl_debug", "mhldebugtool_cli"
		}
		script := "import sys; from " + mod + " import " + fn + "; sys.argv[0] = '" + tool + "'; " + fn + "()"
		cmd := exec.Command(py, append([]string{"-c", script}, args...)...)
		cmd.Dir = root // xsd-schema-check reads xsd/ from here
		cmd.Env = append(os.Environ(), "PYTHONPATH="+root+string(os.PathListSeparator)+meta)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		t.Logf("$ %s %s (exit %d)\n%s", tool, strings.Join(args, " "), code, out)
		return string(out), code
	}
}

// TestArchivalMHLHashByReference: a history fastcopy writes with
// MHLHashes xxh64,md5 (two generations: the copy, and a rerun that
// verifies) is verified by the reference implementation: every file in
// each format, the schema, and the directory hashes of a history in each
// single format it offers; after one byte of one file changed, it fails
// naming that file.
func TestArchivalMHLHashByReference(t *testing.T) {
	ascmhl := archivalASCMHL(t)
	src, base, files := archivalTree(t)
	dst := filepath.Join(base, "dst")
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, MHL: true, MHLHashes: []string{"xxh64", "md5"}, MHLToolVersion: "test"}
	for i := 0; i < 2; i++ {
		sum, err := runEngine(t, opt)
		noErr(t, err)
		if sum.MHLFiles != len(files) {
			t.Fatalf("generation %d lists %d files, want %d", sum.MHLSeq, sum.MHLFiles, len(files))
		}
	}
	gens, err := filepath.Glob(filepath.Join(dst, "ascmhl", "000*.mhl"))
	noErr(t, err)
	if len(gens) != 2 {
		t.Fatalf("generations %v, want 2", gens)
	}
	for _, g := range gens {
		b, err := os.ReadFile(g)
		noErr(t, err)
		for _, want := range []string{`<xxh64 action="original"`, `<md5 action="original"`} {
			if g == gens[1] {
				want = strings.Replace(want, "original", "verified", 1)
			}
			if n := strings.Count(string(b), want); n != len(files) {
				t.Errorf("%s: %d entries %s, want %d", filepath.Base(g), n, want, len(files))
			}
		}
		if strings.Contains(string(b), "<xxh128") {
			t.Errorf("%s records xxh128, which was not asked for", filepath.Base(g))
		}
		if out, code := ascmhl("ascmhl-debug", "xsd-schema-check", g); code != 0 || !strings.Contains(out, "validated") {
			t.Errorf("xsd-schema-check %s: exit %d", filepath.Base(g), code)
		}
	}
	if out, code := ascmhl("ascmhl-debug", "verify", "-v", dst); code != 0 || strings.Count(out, ": OK") != len(files) {
		t.Errorf("ascmhl-debug verify: exit %d, %d files OK, want 0 and %d", code, strings.Count(out, ": OK"), len(files))
	}
	if out, code := ascmhl("ascmhl", "info", "-v", dst); code != 0 || !strings.Contains(out, "Generation 2") {
		t.Errorf("ascmhl info: exit %d", code)
	}
	if _, code := ascmhl("ascmhl", "diff", dst); code != 0 {
		t.Errorf("ascmhl diff: exit %d", code)
	}

	// The directory hashes, in each format the reference offers (its
	// directory check takes a history of one format).
	for _, format := range []string{"xxh128", "xxh64", "xxh3", "md5", "sha1", "c4"} {
		one := filepath.Join(base, "one-"+format)
		_, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: one, MHL: true, MHLHashes: []string{format}, MHLToolVersion: "test"})
		noErr(t, err)
		if out, code := ascmhl("ascmhl-debug", "verify", "-dh", "-h", format, one); code != 0 || strings.Contains(out, "ERROR") {
			t.Errorf("%s: ascmhl-debug verify -dh: exit %d", format, code)
		}
		if _, code := ascmhl("ascmhl-debug", "verify", one); code != 0 {
			t.Errorf("%s: ascmhl-debug verify: exit %d", format, code)
		}
	}

	// One byte changed: the reference names the file.
	p := filepath.Join(dst, "sub", "c.bin")
	b := append([]byte(nil), files["sub/c.bin"]...)
	b[4000] ^= 1
	noErr(t, os.WriteFile(p, b, 0o644))
	if out, code := ascmhl("ascmhl-debug", "verify", dst); code == 0 || !strings.Contains(out, "hash mismatch") || !strings.Contains(out, "sub/c.bin") {
		t.Errorf("ascmhl-debug verify after a byte changed: exit %d", code)
	}
}
