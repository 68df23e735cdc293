package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The reference tools run live where they are found: the ASC MHL reference
// implementation (ascmhl on PATH, or FASTCOPY_ASCMHL naming its source
// tree) and bagit-python (bagit.py on PATH, or FASTCOPY_BAGIT_PYTHON naming
// its source tree). Their sources run with the Python of
// FASTCOPY_PYTHON, else /usr/bin/python3, else python3 on PATH; ascmhl
// needs click, lxml, xxhash, packaging, pathspec, requests and dateutil
// (Debian's python3-* packages).

// archreadAscmhlStub runs ascmhl's command line from its source tree: the
// package takes its version from installed metadata a source tree lacks,
// and checks for a newer release over the network as it starts, which the
// stub replaces with nothing.
const archreadAscmhlStub = `import importlib.metadata, sys
_version = importlib.metadata.version
importlib.metadata.version = lambda name: "0.0.0+source" if name == "ascmhl" else _version(name)
import ascmhl.cli.update as update
class _NoUpdate:
    needs_update = False
    def join(self, timeout=None):
        pass
update.Updater = _NoUpdate
from ascmhl.cli import ascmhl
sys.argv[0] = "ascmhl"
ascmhl.mhltool_cli()
`

// archreadBagitStub runs bagit-python from its source tree (its version,
// too, comes from package metadata).
const archreadBagitStub = `import importlib.metadata
_version = importlib.metadata.version
importlib.metadata.version = lambda name: "0.0.0+source" if name == "bagit" else _version(name)
import bagit
bagit.main()
`

// archreadPython returns the Python to run a tool's source with.
func archreadPython(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FASTCOPY_PYTHON"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3" // Debian's, with the python3-* packages
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("no python3 to run the reference tool with: %v", err)
	}
	return p
}

// archreadReference returns a command line that runs a reference tool:
// the program found on PATH, else its source tree named by envVar, run
// through stub. It skips the test, saying why, when neither is there.
func archreadReference(t *testing.T, program, envVar, pkgDir, stub string) []string {
	t.Helper()
	if p, err := exec.LookPath(program); err == nil {
		return []string{p}
	}
	src := os.Getenv(envVar)
	if src == "" {
		t.Skipf("%s is not on PATH and %s (its source tree) is not set", program, envVar)
	}
	if _, err := os.Stat(filepath.Join(src, pkgDir)); err != nil {
		t.Skipf("%s=%s is not the source tree (no %s): %v", envVar, src, pkgDir, err)
	}
	script := filepath.Join(t.TempDir(), "run.py")
	if err := os.WriteFile(script, []byte(stub), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{archreadPython(t), script}
}

// archreadRunReference runs the tool; ok is whether it exited 0. A tool
// that cannot start (a missing Python module) skips the test, saying so.
func archreadRunReference(t *testing.T, argv []string, pythonPath string, args ...string) (out string, ok bool) {
	t.Helper()
	cmd := exec.Command(argv[0], append(argv[1:], args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath,
		// Nothing leaves the machine, whatever the tool tries.
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9")
	b, err := cmd.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("%v: %v", argv, err)
	}
	if strings.Contains(string(b), "ModuleNotFoundError") {
		t.Skipf("the reference tool cannot start here: %s", b)
	}
	return string(b), err == nil
}

// archreadCard writes a small camera card below a new directory.
func archreadCard(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "card")
	for name, body := range map[string]string{
		"A/c1.mov":  "clip one\n",
		"B/c2.wav":  strings.Repeat("sound ", 40000),
		"notes.txt": "card notes\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestArchreadAscmhlLive: histories the reference implementation writes
// now, in each format it offers and with two at once, verify (exit 0);
// after one byte changes, fastcopy names the file (exit 4), as the
// reference does.
func TestArchreadAscmhlLive(t *testing.T) {
	t.Parallel()
	argv := archreadReference(t, "ascmhl", "FASTCOPY_ASCMHL", "ascmhl", archreadAscmhlStub)
	src := os.Getenv("FASTCOPY_ASCMHL")
	for _, formats := range [][]string{{"md5"}, {"sha1"}, {"c4"}, {"xxh64"}, {"xxh3"}, {"xxh128"}, {"xxh64", "md5"}} {
		t.Run(strings.Join(formats, "+"), func(t *testing.T) {
			card := archreadCard(t)
			args := []string{"create"}
			for _, f := range formats {
				args = append(args, "-h", f)
			}
			if out, ok := archreadRunReference(t, argv, src, append(args, card)...); !ok {
				t.Fatalf("ascmhl %v: %s", args, out)
			}
			code, stdout, stderr := archreadVerify(t, card)
			if code != exitOK || !strings.Contains(stdout, "verified 3 files") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			archreadFlipByte(t, filepath.Join(card, "B", "c2.wav"))
			if out, ok := archreadRunReference(t, argv, src, append(args, card)...); ok || !strings.Contains(out, "B/c2.wav") {
				t.Fatalf("the reference does not find the changed byte: %s", out)
			}
			code, stdout, stderr = archreadVerify(t, card)
			archreadWantDiff(t, code, stdout, stderr, "differs", "B/c2.wav", "expected")
		})
	}
}

// TestArchreadBagitLive: a bag bagit-python makes now (sha256 and sha512,
// with tag manifests) verifies; a changed byte, a missing file, an extra
// payload file and a wrong Payload-Oxum each fail in fastcopy (exit 4,
// named) and in bagit-python's --validate alike.
func TestArchreadBagitLive(t *testing.T) {
	t.Parallel()
	argv := archreadReference(t, "bagit.py", "FASTCOPY_BAGIT_PYTHON", filepath.Join("src", "bagit"), archreadBagitStub)
	pp := ""
	if src := os.Getenv("FASTCOPY_BAGIT_PYTHON"); src != "" {
		pp = filepath.Join(src, "src")
	}
	bag := func(t *testing.T) string {
		dir := archreadCard(t)
		if out, ok := archreadRunReference(t, argv, pp, "--quiet", "--sha256", "--sha512", dir); !ok {
			t.Fatalf("bagit.py: %s", out)
		}
		if out, ok := archreadRunReference(t, argv, pp, "--validate", dir); !ok {
			t.Fatalf("bagit.py --validate on its own bag: %s", out)
		}
		code, stdout, stderr := archreadVerify(t, dir)
		if code != exitOK || !strings.Contains(stdout, ": identical") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		return dir
	}
	cases := []struct {
		name             string
		spoil            func(t *testing.T, dir string)
		kind, path, what string
	}{
		{"changed byte", func(t *testing.T, dir string) { archreadFlipByte(t, filepath.Join(dir, "data", "B", "c2.wav")) }, "differs", "data/B/c2.wav", "sha256"},
		{"missing file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "data", "notes.txt")); err != nil {
				t.Fatal(err)
			}
		}, "missing", "data/notes.txt", "manifest-sha256.txt"},
		{"extra payload file", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "data", "A", "c9.mov"), []byte("late\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "extra", "data/A/c9.mov", "in no manifest"},
		{"wrong Payload-Oxum", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "bag-info.txt")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s := strings.Replace(string(b), ".3\n", ".4\n", 1)
			if s == string(b) {
				t.Fatalf("no Payload-Oxum of 3 files:\n%s", b)
			}
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "oxum", "bag-info.txt", "in 4 files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := bag(t)
			tc.spoil(t, dir)
			if out, ok := archreadRunReference(t, argv, pp, "--validate", dir); ok {
				t.Fatalf("bagit.py --validate passes the spoilt bag: %s", out)
			}
			code, stdout, stderr := archreadVerify(t, dir)
			archreadWantDiff(t, code, stdout, stderr, tc.kind, tc.path, tc.what)
		})
	}
}
