//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// jsonPath is how a script reads a path from a --json report: path_base64,
// the name's exact bytes, when it is there, else path.
type jsonPath struct {
	Path       string  `json:"path"`
	PathBase64 *[]byte `json:"path_base64"`
}

func (p jsonPath) name() string {
	if p.PathBase64 != nil {
		return string(*p.PathBase64)
	}
	return p.Path
}

// TestJSONNamesRoundTrip checks that a script reading --json finds the file
// a failure or a difference names, when the name is not valid UTF-8 (which
// a JSON string cannot hold): from the copy's failures and from the
// differences of 'fastcopy verify --json', the name decoded from the report
// opens the file. A name that is valid UTF-8 is given as path alone.
func TestJSONNamesRoundTrip(t *testing.T) {
	const bad = "caf\xe9 \xff\xfe.txt" // Latin-1 and stray bytes
	if utf8.ValidString(bad) {
		t.Fatal("the test's name is valid UTF-8")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	for _, n := range []string{bad, "plain.txt", "ok.txt"} {
		writeTestFile(t, filepath.Join(src, n), "data of "+n)
	}
	// Directories in the way: both files fail, and the report names them.
	for _, n := range []string{bad, "plain.txt"} {
		if err := os.MkdirAll(filepath.Join(dst, n, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--json", "--no-progress", src, dst}, &stdout, &stderr); code != exitSomeFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitSomeFailed, stdout.String(), stderr.String())
	}
	var rep struct {
		Failures []jsonPath `json:"failures"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, stdout.String())
	}
	got := map[string]jsonPath{}
	for _, f := range rep.Failures {
		got[f.name()] = f
	}
	if len(rep.Failures) != 2 {
		t.Errorf("%d failures in the report, want 2:\n%s", len(rep.Failures), stdout.String())
	}
	if f, ok := got[bad]; !ok {
		t.Errorf("no failure decodes to %q:\n%s", bad, stdout.String())
	} else if st, err := os.Lstat(filepath.Join(dst, f.name())); err != nil || !st.IsDir() {
		t.Errorf("the name from the report does not open what is in the way: %v", err)
	}
	if f, ok := got["plain.txt"]; !ok || f.PathBase64 != nil || f.Path != "plain.txt" {
		t.Errorf("a valid UTF-8 name is reported as %+v, want path \"plain.txt\" alone:\n%s", f, stdout.String())
	}

	// fastcopy verify --json: a copy whose file with that name differs.
	dst2 := filepath.Join(dir, "dst2")
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"-q", "--no-progress", src, dst2}, &stdout, &stderr); code != exitOK {
		t.Fatalf("copy: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	writeTestFile(t, filepath.Join(dst2, bad), "something else")
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"verify", "--json", "--no-cache", src, dst2}, &stdout, &stderr); code != exitMismatch {
		t.Fatalf("verify: exit %d, want %d\n%s%s", code, exitMismatch, stdout.String(), stderr.String())
	}
	var vrep struct {
		Diffs []jsonPath `json:"differences"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &vrep); err != nil {
		t.Fatalf("the verify report is not JSON: %v\n%s", err, stdout.String())
	}
	if len(vrep.Diffs) != 1 || vrep.Diffs[0].name() != bad {
		t.Fatalf("verify reports %+v, want one difference that decodes to %q:\n%s", vrep.Diffs, bad, stdout.String())
	}
	if b, err := os.ReadFile(filepath.Join(dst2, vrep.Diffs[0].name())); err != nil || string(b) != "something else" {
		t.Errorf("the name from the verify report does not open the file that differs: %q, %v", b, err)
	}
}

// TestManifestInvalidUTF8Names checks that a manifest, which holds names as
// their bytes (as xxhsum and sha256sum do), names a file whose name is not
// valid UTF-8 so that 'fastcopy verify --manifest' finds it, and that the
// check catches a change of that file.
func TestManifestInvalidUTF8Names(t *testing.T) {
	const bad = "caf\xe9 \xff\xfe.txt"
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	src, dst, m := filepath.Join(dir, "src"), filepath.Join(dir, "dst"), filepath.Join(dir, "m.xxh128")
	writeTestFile(t, filepath.Join(src, bad), "data")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-q", "--no-progress", "--manifest", m, src, dst}, &stdout, &stderr); code != exitOK {
		t.Fatalf("copy: exit %d\n%s", code, stderr.String())
	}
	if b, err := os.ReadFile(m); err != nil || !bytes.Contains(b, []byte("  "+bad+"\n")) {
		t.Fatalf("the manifest does not hold the name's bytes: %q, %v", b, err)
	}
	if code := run(context.Background(), []string{"verify", "-q", "--no-cache", "--manifest", m, dst}, &stdout, &stderr); code != exitOK {
		t.Fatalf("verify --manifest: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	writeTestFile(t, filepath.Join(dst, bad), "DATA")
	stdout.Reset()
	if code := run(context.Background(), []string{"verify", "--json", "--no-cache", "--manifest", m, dst}, &stdout, &stderr); code != exitMismatch {
		t.Fatalf("verify --manifest of a changed file: exit %d, want %d\n%s%s", code, exitMismatch, stdout.String(), stderr.String())
	}
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCacheStatsJSONInvalidUTF8Path checks that 'fastcopy cache stats
// --json' names a cache file whose path is not valid UTF-8 by its bytes too.
func TestCacheStatsJSONInvalidUTF8Path(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "hashes-\xe9.db")
	writeTestFile(t, filepath.Join(dir, "src", "a"), "a")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-q", "--cache", db, filepath.Join(dir, "src"), filepath.Join(dir, "dst")}, &stdout, &stderr); code != exitOK {
		t.Fatalf("copy: exit %d\n%s", code, stderr.String())
	}
	if code := run(context.Background(), []string{"cache", "stats", "--json", "--cache", db}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	var st struct {
		PathBase64 []byte `json:"path_base64"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	if string(st.PathBase64) != db {
		t.Fatalf("path_base64 decodes to %q, want %q:\n%s", st.PathBase64, db, stdout.String())
	}
	if _, err := os.Stat(string(st.PathBase64)); err != nil {
		t.Errorf("the path from the report does not name the cache: %v", err)
	}
}
