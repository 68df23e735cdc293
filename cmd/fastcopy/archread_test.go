package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/mhl"
)

// The records of testdata/archread were written by the ASC MHL reference
// implementation and by bagit-python (testdata/archread/README.md says
// how); fastcopy verify must check each of them, and name what breaks it.

// archreadVerify runs fastcopy verify --no-cache (the user's hash cache is
// never opened) with args, and returns its exit code, stdout and stderr.
func archreadVerify(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"verify", "--no-cache"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// archreadCopyTree copies the fixture tree src into a new temporary
// directory and returns the copy's path.
func archreadCopyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// archreadFlipByte changes one byte of the file at p (its first).
func archreadFlipByte(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 0x01
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// archreadFixtures lists testdata/archread's fixtures whose names start
// with prefix.
func archreadFixtures(t *testing.T, prefix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("testdata", "archread", prefix+"*"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no fixtures %s* in testdata/archread: %v", prefix, err)
	}
	return m
}

// archreadWantDiff fails unless verify exited 4 with a difference of kind
// naming path (and holding detail, when not "").
func archreadWantDiff(t *testing.T, code int, stdout, stderr, kind, path, detail string) {
	t.Helper()
	if code != exitMismatch {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitMismatch, stdout, stderr)
	}
	prefix := fmt.Sprintf("%-10s %q", kind, path)
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, prefix) && strings.Contains(line, detail) {
			return
		}
	}
	t.Fatalf("no %s %q (with %q) in the report:\n%s\nstderr:\n%s", kind, path, detail, stdout, stderr)
}

// TestArchreadMHLFixtures: a history the reference implementation wrote in
// each format it offers (and with three formats per file, and with two
// generations in two formats) verifies; one changed byte of one file is
// exit 4 naming it, in the strongest format recorded.
func TestArchreadMHLFixtures(t *testing.T) {
	t.Parallel()
	strongest := map[string]string{
		"ascmhl-md5": "md5", "ascmhl-sha1": "sha1", "ascmhl-c4": "c4", "ascmhl-xxh64": "xxh64",
		"ascmhl-xxh3": "xxh3", "ascmhl-xxh128": "xxh128", "ascmhl-several": "c4", "ascmhl-twogen": "sha1",
	}
	for _, fx := range archreadFixtures(t, "ascmhl-") {
		name := filepath.Base(fx)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			format, ok := strongest[name]
			if !ok {
				t.Fatalf("fixture %s has no expected format here", name)
			}
			dir := archreadCopyTree(t, fx)
			code, stdout, stderr := archreadVerify(t, dir)
			if code != exitOK || !strings.Contains(stdout, "verified 3 files") || !strings.Contains(stdout, ": identical") {
				t.Fatalf("intact history: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			archreadFlipByte(t, filepath.Join(dir, "B", "c2.wav"))
			code, stdout, stderr = archreadVerify(t, dir)
			archreadWantDiff(t, code, stdout, stderr, "differs", "B/c2.wav", format+" ")
			if strings.Contains(stdout, "A/c1.mov") || strings.Contains(stdout, "notes.txt") {
				t.Fatalf("an intact file is reported:\n%s", stdout)
			}
		})
	}
}

// TestArchreadBagFixtures: a bag bagit-python made (sha256, sha512, both;
// with tag manifests) verifies; a changed byte, a missing file, an extra
// payload file, a file one manifest of two lacks, a changed tag file and
// a wrong Payload-Oxum each fail with exit 4, named.
func TestArchreadBagFixtures(t *testing.T) {
	t.Parallel()
	for _, fx := range archreadFixtures(t, "bagit-") {
		name := filepath.Base(fx)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fresh := func() string { return archreadCopyTree(t, fx) }
			dir := fresh()
			code, stdout, stderr := archreadVerify(t, dir)
			if code != exitOK || !strings.Contains(stdout, ": identical") {
				t.Fatalf("intact bag: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			alg := strings.Split(strings.TrimPrefix(name, "bagit-"), "-")[0]

			t.Run("changed byte", func(t *testing.T) {
				dir := fresh()
				archreadFlipByte(t, filepath.Join(dir, "data", "photos", "one.jpg"))
				code, stdout, stderr := archreadVerify(t, dir)
				archreadWantDiff(t, code, stdout, stderr, "differs", "data/photos/one.jpg", "expected by manifest-"+alg+".txt")
			})
			t.Run("missing file", func(t *testing.T) {
				dir := fresh()
				if err := os.Remove(filepath.Join(dir, "data", "notes with space.txt")); err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := archreadVerify(t, dir)
				archreadWantDiff(t, code, stdout, stderr, "missing", "data/notes with space.txt", "manifest-"+alg+".txt")
				archreadWantDiff(t, code, stdout, stderr, "oxum", "bag-info.txt", "data/ holds")
			})
			t.Run("extra payload file", func(t *testing.T) {
				dir := fresh()
				if err := os.WriteFile(filepath.Join(dir, "data", "photos", "three.jpg"), []byte("slipped in\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := archreadVerify(t, dir)
				archreadWantDiff(t, code, stdout, stderr, "extra", "data/photos/three.jpg", "in no manifest")
			})
			t.Run("wrong Payload-Oxum", func(t *testing.T) {
				dir := fresh()
				info := filepath.Join(dir, "bag-info.txt")
				data, err := os.ReadFile(info)
				if err != nil {
					t.Fatal(err)
				}
				changed := strings.Replace(string(data), "Payload-Oxum: 50.3", "Payload-Oxum: 50.4", 1)
				if changed == string(data) {
					t.Fatalf("bag-info.txt has no Payload-Oxum: 50.3:\n%s", data)
				}
				if err := os.WriteFile(info, []byte(changed), 0o644); err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := archreadVerify(t, dir)
				archreadWantDiff(t, code, stdout, stderr, "oxum", "bag-info.txt", "records 50 bytes in 4 files; data/ holds 50 bytes in 3 files")
				// bag-info.txt is in the tag manifest, which catches the edit too.
				archreadWantDiff(t, code, stdout, stderr, "differs", "bag-info.txt", "expected by tagmanifest-"+alg+".txt")
			})
			t.Run("fetch.txt refused", func(t *testing.T) {
				dir := fresh()
				if err := os.WriteFile(filepath.Join(dir, "fetch.txt"), []byte("http://127.0.0.1/x 5 data/x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := archreadVerify(t, dir)
				if code != exitUsage || !strings.Contains(stderr, filepath.Join(dir, "fetch.txt")) || !strings.Contains(stderr, "not complete") {
					t.Fatalf("exit %d, want %d naming fetch.txt\nstdout:\n%s\nstderr:\n%s", code, exitUsage, stdout, stderr)
				}
			})
		})
	}
}

// TestArchreadBagPartialManifest: of a bag's two payload manifests, one
// lacks a file: that file is named, with the manifest that lacks it.
func TestArchreadBagPartialManifest(t *testing.T) {
	t.Parallel()
	dir := archreadCopyTree(t, filepath.Join("testdata", "archread", "bagit-sha256-sha512"))
	m := filepath.Join(dir, "manifest-sha512.txt")
	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.Contains(l, "data/photos/two.jpg") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(m, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := archreadVerify(t, dir)
	archreadWantDiff(t, code, stdout, stderr, "unlisted", "data/photos/two.jpg", "not in manifest-sha512.txt")
}

// TestArchreadBagUnknownFormat: a bag whose only payload manifest is in a
// format fastcopy does not compute is refused, naming it, not passed.
func TestArchreadBagUnknownFormat(t *testing.T) {
	t.Parallel()
	dir := archreadCopyTree(t, filepath.Join("testdata", "archread", "bagit-sha512"))
	if err := os.Rename(filepath.Join(dir, "manifest-sha512.txt"), filepath.Join(dir, "manifest-sha3_512.txt")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := archreadVerify(t, dir)
	if code != exitUsage || !strings.Contains(stderr, "sha3_512") || strings.Contains(stdout, "identical") {
		t.Fatalf("exit %d, want %d naming sha3_512\nstdout:\n%s\nstderr:\n%s", code, exitUsage, stdout, stderr)
	}
}

// archreadTool returns the path of the program name, or skips the test
// saying it is not there.
func archreadTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	return p
}

// archreadExec runs a program in dir and returns its standard output (its
// standard error too when it fails) and whether it exited 0.
func archreadExec(t *testing.T, dir string, prog string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("%s %v: %v", prog, args, err)
	}
	if err != nil {
		return string(out) + stderr.String(), false
	}
	return string(out), true
}

// TestArchreadManifestFormats: manifests written by sha256sum, sha512sum,
// sha1sum, md5sum, b3sum and xxhsum -H0..-H3, in GNU and tagged form,
// check with the tool that wrote them (-c) and with fastcopy verify
// --manifest; after one byte of one file changes, both fail, and fastcopy
// names the file (exit 4).
func TestArchreadManifestFormats(t *testing.T) {
	t.Parallel()
	type tool struct {
		name     string   // the test's name
		prog     string   // the program
		args     []string // to write the manifest
		manifest string   // its file name
		extra    []string // fastcopy verify flags
		escapes  bool     // writes names with newlines (escaped)
	}
	tools := []tool{
		{"sha256sum", "sha256sum", nil, "SHA256SUMS", nil, true},
		{"sha256sum-neutral-name", "sha256sum", nil, "checksums.txt", nil, true},
		{"sha256sum-tag", "sha256sum", []string{"--tag"}, "checksums.txt", nil, true},
		{"sha512sum", "sha512sum", nil, "manifest-sha512.txt", nil, true},
		{"sha512sum-tag", "sha512sum", []string{"--tag"}, "list", nil, true},
		{"sha1sum", "sha1sum", nil, "list", nil, true},
		{"md5sum", "md5sum", nil, "MD5SUMS", nil, true},
		{"md5sum-flag", "md5sum", nil, "list", []string{"--manifest-hash", "md5"}, true},
		{"md5sum-tag", "md5sum", []string{"--tag"}, "list", nil, true},
		{"b3sum", "b3sum", nil, "B3SUMS", nil, false},
		{"xxhsum-H0", "xxhsum", []string{"-H0"}, "list", nil, false},
		{"xxhsum-H1", "xxhsum", []string{"-H1"}, "list", nil, false},
		{"xxhsum-H2", "xxhsum", []string{"-H2"}, "list", nil, false},
		{"xxhsum-H3", "xxhsum", []string{"-H3"}, "list", nil, false},
		{"xxhsum-H1-tag", "xxhsum", []string{"--tag", "-H1"}, "list", nil, false},
		{"xxhsum-H2-tag", "xxhsum", []string{"--tag", "-H2"}, "list", nil, false},
	}
	for _, tc := range tools {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			prog := archreadTool(t, tc.prog)
			root := t.TempDir()
			dir := filepath.Join(root, "tree")
			files := map[string]string{"a.txt": "alpha\n", "sub/b c.txt": "beta gamma\n", "sub/big.bin": strings.Repeat("0123456789abcdef", 1<<16+3)}
			if tc.escapes {
				files["sub/new\nline.txt"] = "odd name\n"
			}
			var names []string
			for n, body := range files {
				p := filepath.Join(dir, filepath.FromSlash(n))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				names = append(names, n)
			}
			out, ok := archreadExec(t, dir, prog, append(tc.args, names...)...)
			if !ok {
				t.Fatalf("%s: %s", tc.prog, out)
			}
			manifest := filepath.Join(root, tc.manifest)
			if err := os.WriteFile(manifest, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, ok := archreadExec(t, dir, prog, "-c", manifest); !ok {
				t.Fatalf("%s -c does not accept its own manifest: %s", tc.prog, out)
			}
			code, stdout, stderr := archreadVerify(t, append(append([]string{"--manifest", manifest}, tc.extra...), dir)...)
			want := fmt.Sprintf("verified %d files", len(files))
			if code != exitOK || !strings.Contains(stdout, want) || !strings.Contains(stdout, ": identical") {
				t.Fatalf("intact tree: exit %d\nmanifest:\n%s\nstdout:\n%s\nstderr:\n%s", code, out, stdout, stderr)
			}
			archreadFlipByte(t, filepath.Join(dir, "sub", "big.bin"))
			if out, ok := archreadExec(t, dir, prog, "-c", manifest); ok {
				t.Fatalf("%s -c accepts a changed file: %s", tc.prog, out)
			}
			code, stdout, stderr = archreadVerify(t, append(append([]string{"--manifest", manifest}, tc.extra...), dir)...)
			archreadWantDiff(t, code, stdout, stderr, "differs", "sub/big.bin", "expected")
			if strings.Count(stdout, "differs") != 1 {
				t.Fatalf("more than the changed file differs:\n%s", stdout)
			}
		})
	}
}

// TestArchreadManifestGuessHint: an md5sum manifest under a name that says
// nothing is read as xxh128 (fastcopy's own and xxhsum -H2's, the same
// length); what differs then comes with a hint naming --manifest-hash md5.
func TestArchreadManifestGuessHint(t *testing.T) {
	t.Parallel()
	prog := archreadTool(t, "md5sum")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := archreadExec(t, root, prog, "a.txt")
	if !ok {
		t.Fatal(out)
	}
	manifest := filepath.Join(t.TempDir(), "list")
	if err := os.WriteFile(manifest, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := archreadVerify(t, "--manifest", manifest, root)
	archreadWantDiff(t, code, stdout, stderr, "differs", "a.txt", "xxh128")
	if !strings.Contains(stderr, "--manifest-hash md5") {
		t.Fatalf("no hint naming --manifest-hash md5:\n%s", stderr)
	}
}

// TestArchreadMHLStrongest: of several formats recorded for a file, the
// strongest fastcopy computes is the one checked; a history of whose
// files fastcopy can check none is refused, naming its formats, and a
// file alone without one is "unchecked".
func TestArchreadMHLStrongest(t *testing.T) {
	t.Parallel()
	files := []mhl.ExpectedFile{
		{Path: "a", Formats: []string{"xxh64", "md5", "c4"}, Digests: map[string]string{"xxh64": "1", "md5": "2", "c4": "3"}},
		{Path: "b", Formats: []string{"xxh32", "xxh3"}, Digests: map[string]string{"xxh32": "4", "xxh3": "5"}},
		{Path: "c", Formats: []string{"sha1", "xxh128"}, Digests: map[string]string{"sha1": "6", "xxh128": "7"}},
		{Path: "d", Formats: []string{"sha3"}, Digests: map[string]string{"sha3": "8"}},
	}
	entries, unhashed, err := mhlDigestEntries("card", files)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "c4 3", "b": "xxh3 5", "c": "xxh128 7"}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(entries), len(want), entries)
	}
	for _, e := range entries {
		if len(e.Digests) != 1 || e.Digests[0].Format.Name+" "+e.Digests[0].Value != want[e.Path] {
			t.Errorf("%s checked by %+v, want %s", e.Path, e.Digests, want[e.Path])
		}
	}
	if why := unhashed["d"]; len(unhashed) != 1 || !strings.Contains(why, "sha3") {
		t.Errorf("unhashed = %v, want d recorded as sha3", unhashed)
	}
	_, _, err = mhlDigestEntries("card", files[3:])
	var refusal *copyengine.RefusalError
	if !errors.As(err, &refusal) || !strings.Contains(err.Error(), "sha3 only") || exitCode(err) != exitUsage {
		t.Fatalf("a history in sha3 only: %v (exit %d), want a refusal naming sha3", err, exitCode(err))
	}
}

// TestArchreadBagUncomputedBeside: a manifest in a format fastcopy does
// not compute, beside one it does, is named in a warning; its list still
// counts: a file only it lists and that is gone is missing.
func TestArchreadBagUncomputedBeside(t *testing.T) {
	t.Parallel()
	dir := archreadCopyTree(t, filepath.Join("testdata", "archread", "bagit-sha256"))
	other := "0000  data/photos/one.jpg\n0000  data/notes with space.txt\n0000  data/photos/two.jpg\n0000  data/gone.jpg\n"
	if err := os.WriteFile(filepath.Join(dir, "manifest-sha3_256.txt"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := archreadVerify(t, dir)
	if !strings.Contains(stderr, "manifest-sha3_256.txt") || !strings.Contains(stderr, "warning") {
		t.Errorf("no warning naming manifest-sha3_256.txt:\n%s", stderr)
	}
	archreadWantDiff(t, code, stdout, stderr, "missing", "data/gone.jpg", "listed in manifest-sha3_256.txt")
}
